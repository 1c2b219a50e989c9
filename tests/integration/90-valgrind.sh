#!/usr/bin/env bash
# A full `run --exit-when-idle` (and an idempotent one) under valgrind
# memcheck: no invalid access, no leak of ktally's own. Only definite and
# indirect leaks count; library-internal allocations that live until exit
# are suppressed in tests/valgrind.supp, each with its reason.
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

topic=$(kt_new_topic valgrind 3)
kt_gen "$topic" --lines 20000 --lines-per-value 4 --seed 90 --truth "$WORK/truth" > /dev/null
for mode in transactional idempotent; do
  db_uri=$(kt_new_db "vg_$mode"); db=$(kt_db_name "$db_uri")
  valgrind --tool=memcheck --leak-check=full --errors-for-leak-kinds=definite,indirect \
    --show-leak-kinds=definite,indirect --error-exitcode=99 --track-fds=no \
    --suppressions="$KT_SRC/tests/valgrind.supp" --log-file="$WORK/vg-$mode.log" \
    "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --mode "$mode" \
      --interval 0 --exit-when-idle --max-per-partition 2000 2> "$WORK/run-$mode.log" \
    || { tail -40 "$WORK/vg-$mode.log" >&2; fail "valgrind found errors or leaks ($mode)"; }
  kt_check_counts "$db" "$WORK/truth"
  summary=$(grep -E "ERROR SUMMARY|definitely lost" "$WORK/vg-$mode.log" | sed 's/==[0-9]*== //' | tr '\n' ' ')
  note "$TEST_NAME: $mode: $summary"
done
