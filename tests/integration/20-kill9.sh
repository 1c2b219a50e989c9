#!/usr/bin/env bash
# kill -9 at random moments, many times, while data keeps arriving; each
# time ktally is restarted. At the end the counts are still exact: a batch
# either committed whole (counts and offsets together) or not at all.
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

KILLS=${KT_KILLS:-30}
db_uri=$(kt_new_db kill); db=$(kt_db_name "$db_uri")
topic=$(kt_new_topic kill 6)

# Data arrives during the whole test, at a bounded rate.
kt_gen "$topic" --lines 150000 --seed 21 --rate 30000 --lines-per-value 2 \
  --truth "$WORK/t1" > "$WORK/gen1" &
gen=$!; KT_CHILDREN+=("$gen")

# Small batches back to back: many commits, so kills land at every stage.
run_args=(run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri"
          --interval 0 --max-per-partition 2000 --log-format json)
kills=0
while ((kills < KILLS)); do
  # 20..420 ms: from before the first batch to several batches in.
  kt_kill9 20 400 "$WORK/run.log" "$KTALLY" "${run_args[@]}" && kills=$((kills + 1))
done
wait "$gen" || fail "kt-gen failed"

"$KTALLY" "${run_args[@]}" --exit-when-idle 2>> "$WORK/run.log" || { tail -20 "$WORK/run.log" >&2; fail "final run failed"; }
kt_check_counts "$db" "$WORK/t1"
kt_audit "$db_uri"
messages=$(sed 's/.*messages=\([0-9]*\).*/\1/' "$WORK/gen1")
[[ $(kt_offset_sum "$db" "$topic") == "$messages" ]] || fail "stored offsets do not add up to $messages"
commits=$(kt_log_count batch "$WORK/run.log")
note "$TEST_NAME: $kills kills, $commits commits, 150000 lines, exact"
