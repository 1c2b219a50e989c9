#!/usr/bin/env bash
# kill -9 at random moments while access-log lines arrive, with --by
# service,status --sum bytes, in both modes: each time ktally is
# restarted; at the end every (minute, service, status) row holds its
# exact count and byte sum, the offsets reach the high watermarks and the
# audit finds one chain. A batch commits whole or not at all, its rows
# with its offsets.
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

KILLS=${KT_KILLS:-12}
kt_shape_options access
for mode in transactional idempotent; do
  db_uri=$(kt_new_db "by_kill_$mode"); db=$(kt_db_name "$db_uri")
  topic=$(kt_new_topic "by_kill_$mode" 6)
  kt_gen "$topic" --shape access --keys 40 --lines 60000 --rate 15000 --lines-per-value 2 \
    --per-second 100 --seed "$KT_SEED" --truth "$WORK/truth" > "$WORK/gen" &
  gen=$!; KT_CHILDREN+=("$gen")
  # Small batches back to back: many commits, so kills land at every stage.
  run_args=(run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --mode "$mode"
            --interval 0 --max-per-partition 300 "${KT_OPTS[@]}")
  kills=0
  while ((kills < KILLS)); do
    kt_kill9 20 400 "$WORK/$mode.log" "$KTALLY" "${run_args[@]}" && kills=$((kills + 1))
  done
  wait "$gen" || fail "kt-gen failed"
  "$KTALLY" "${run_args[@]}" --exit-when-idle 2>> "$WORK/$mode.log" \
    || { tail -20 "$WORK/$mode.log" >&2; fail "$mode: final run failed"; }
  kt_check_groups "$db" "$WORK/truth"
  kt_audit "$db_uri"
  messages=$(sed 's/.*messages=\([0-9]*\).*/\1/' "$WORK/gen")
  [[ $(kt_offset_sum "$db" "$topic") == "$messages" ]] || fail "$mode: stored offsets do not add up to $messages"
  commits=$(grep -c 'batch .* records' "$WORK/$mode.log" || true)
  note "$TEST_NAME: $mode: $kills kills, $commits commits, 60000 lines, $(wc -l < "$WORK/truth") rows exact"
done
