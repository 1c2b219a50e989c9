#!/usr/bin/env bash
# ktally replay: a fixed range into a new table equals the truth of exactly
# that range; running it twice, or killing it midway and running it again,
# gives the same table; the live table and offsets are untouched; every
# validation error is one line, exit 2, nothing written.
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

db_uri=$(kt_new_db replay); db=$(kt_db_name "$db_uri")
topic=$(kt_new_topic replay 4)

# Three phases of 10,000 records per partition each (round robin over 4
# partitions): phase 2 is offsets [10000, 20000) of every partition.
kt_gen "$topic" --lines 40000 --seed 91 --truth "$WORK/t1" > /dev/null
kt_gen "$topic" --lines 40000 --seed 92 --truth "$WORK/t2" > /dev/null
kt_gen "$topic" --lines 40000 --seed 93 --truth "$WORK/t3" > /dev/null
kt_sum_truths "$WORK/t1" "$WORK/t2" "$WORK/t3" > "$WORK/all"

# The live job first; its table and offsets must not move below.
"$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --interval 0 \
  --exit-when-idle 2> "$WORK/live.log" || fail "live run failed"
kt_check_counts "$db" "$WORK/all"
live=$(kt_sql "$db" "CHECKSUM TABLE error_log; SELECT job, \`partition\`, \`offset\` FROM kafka_offset WHERE job = '$topic' ORDER BY 2")

range=(--from 0:10000,1:10000,2:10000,3:10000 --until 0:20000,1:20000,2:20000,3:20000)
replay() { "$KTALLY" replay --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" "$@"; }

replay "${range[@]}" --log-format json 2> "$WORK/r1.log" || { cat "$WORK/r1.log" >&2; fail "replay failed"; }
kt_check_counts "$db" "$WORK/t2" error_log_replay
[[ $(kt_log_count done "$WORK/r1.log") == 1 && $(kt_log_sum done records "$WORK/r1.log") == 40000 ]] \
  || { cat "$WORK/r1.log" >&2; fail "no summary of 40000 records"; }
replay "${range[@]}" 2> "$WORK/r2.log" || fail "second replay failed"
kt_check_counts "$db" "$WORK/t2" error_log_replay

# Killed midway (small batches make it slow enough), then run again.
kills=0
for ((k = 0; k < 5; k++)); do
  kt_kill9 20 150 "$WORK/r3.log" replay "${range[@]}" --table again --max-per-partition 100 \
    && kills=$((kills + 1))
done
replay "${range[@]}" --table again 2>> "$WORK/r3.log" || fail "replay after kills failed"
kt_check_counts "$db" "$WORK/t2" again

# One partition, part of a range.
replay --from 2:10000 --until 2:20000 --table p2 2> /dev/null || fail "one-partition replay failed"
replay --from 0:0,1:0,3:0 --until 0:0,1:0,3:0 --table empty 2> /dev/null || fail "empty replay failed"
[[ $(kt_sql "$db" "SELECT COUNT(*) FROM empty") == 0 ]] || fail "an empty range counted something"

# Into the live table: allowed when named, with a warning; the live
# offsets stay where they were either way.
[[ $(kt_sql "$db" "CHECKSUM TABLE error_log; SELECT job, \`partition\`, \`offset\` FROM kafka_offset WHERE job = '$topic' ORDER BY 2") == "$live" ]] \
  || fail "a replay touched the live table or offsets"
replay --from 0:0 --until 0:5 --table error_log --log-format json 2> "$WORK/live2.log" \
  || fail "replay into error_log failed"
kt_log_match '.event == "replay-into-live" and .level == "warning"' "$WORK/live2.log" \
  || fail "no warning when replaying into error_log"

# Validation: one line, exit 2, nothing created.
tables=$(kt_sql "$db" "SHOW TABLES")
expect2() {
  local rc=0
  replay "$@" > /dev/null 2> "$WORK/err" || rc=$?
  [[ $rc == 2 && $(wc -l < "$WORK/err") == 1 ]] || { cat "$WORK/err" >&2; fail "replay $*: exit $rc, expected 2 and one line"; }
}
expect2 --from 7:0 --until 7:10 --table v1
expect2 --from 0:50 --until 0:40 --table v2
expect2 --from 0:0 --until 0:30001 --table v3
expect2 --from 0:0 --until 0:10 --table 'v4;drop'
expect2 --from 0:0 --until 0:10 --table "\`v5\`"
expect2 --from 0:0,0:1 --until 0:10 --table v6
expect2 --from 0:0 --until 1:10 --table v7
expect2 --from 0:x --until 0:10 --table v8
[[ $(kt_sql "$db" "SHOW TABLES") == "$tables" ]] || fail "a refused replay created a table"

# From below the log start (data lost to retention): a one-partition topic
# that keeps ~5 MB (kt_new_trimmed_topic), pushed past it.
lost=$(kt_new_trimmed_topic replaylost 1)
kt_gen "$lost" --lines 300000 --lines-per-value 50 --seed 94 > /dev/null
low=$(kt_wait_trimmed "$lost" 0 0)
rc=0; "$KTALLY" replay --brokers "$KT_BROKERS" --topic "$lost" --db "$db_uri" --from 0:0 --until "0:$low" \
  --table v9 2> "$WORK/err" || rc=$?
[[ $rc == 2 ]] && grep -q "lost to retention" "$WORK/err" || { cat "$WORK/err" >&2; fail "replay below the log start: exit $rc"; }
note "$TEST_NAME: exact range, idempotent rerun, $kills kills then exact, live data untouched, 9 validation errors refused"
