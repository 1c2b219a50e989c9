#!/usr/bin/env bash
# A job of several topics commits each batch in ONE transaction across its
# topics (issue #14): the job's table never shows one topic's minute
# without the other's. Two topics get the same lines, partition by
# partition, so a batch plans the same ranges on both: every snapshot of
# kafka_offset, taken while the job runs and between kill -9s, must show
# both topics at the same offsets. Before, each topic committed on a thread
# of its own and the two drifted apart.
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

db_uri=$(kt_new_db topics_txn); db=$(kt_db_name "$db_uri")
a=$(kt_new_topic topics_txn_a 2); b=$(kt_new_topic topics_txn_b 2)
job=txn$RUN_ID
for t in "$a" "$b"; do
  kt_gen "$t" --lines 40000 --lines-per-value 4 --seed 107 --truth "$WORK/truth_$t" > /dev/null \
    || fail "kt-gen failed"
done
kt_sum_truths "$WORK/truth_$a" "$WORK/truth_$b" > "$WORK/truth"

# Offsets of b's partitions that differ from a's, in one snapshot.
apart() {
  kt_sql "$db" "SELECT COUNT(*) FROM kafka_offset x JOIN kafka_offset y
                  ON y.job = x.job AND y.partition = x.partition AND y.topic = '$b'
                 WHERE x.job = '$job' AND x.topic = '$a' AND x.offset <> y.offset" 2> /dev/null \
    || echo 0
}
run=(run --brokers "$KT_BROKERS" --topic "$a,$b" --job "$job" --db "$db_uri" --interval 0
     --max-per-partition 300)
"$KTALLY" "${run[@]}" --exit-when-idle 2> "$WORK/run.log" &
pid=$!; KT_CHILDREN+=("$pid")
polls=0
while kill -0 "$pid" 2> /dev/null; do
  n=$(apart)
  [[ $n == 0 ]] || fail "a snapshot shows $n partitions of $b at other offsets than $a's"
  polls=$((polls + 1))
done
wait "$pid" || { tail -5 "$WORK/run.log" >&2; fail "the run failed"; }
kt_check_counts "$db" "$WORK/truth"

# The same under kill -9, on more data: never apart between two lives.
for t in "$a" "$b"; do
  kt_gen "$t" --lines 20000 --lines-per-value 4 --seed 108 --start "2018-01-01 00:00:00" \
    --truth "$WORK/more_$t" > /dev/null || fail "kt-gen failed"
done
kt_sum_truths "$WORK/truth" "$WORK/more_$a" "$WORK/more_$b" > "$WORK/truth2"
kills=0
for ((k = 0; k < 6; k++)); do
  kt_kill9 100 400 "$WORK/kill.log" "$KTALLY" "${run[@]}" && kills=$((kills + 1))
  [[ $(apart) == 0 ]] || fail "after kill -9 number $k, $b and $a stand at other offsets"
done
"$KTALLY" "${run[@]}" --exit-when-idle 2>> "$WORK/kill.log" || { tail -5 "$WORK/kill.log" >&2; fail "the last run failed"; }
kt_check_counts "$db" "$WORK/truth2"
[[ $(kt_offset_sum "$db" "$job") == 30000 ]] || fail "offsets do not add up to 30000"
kt_audit "$db_uri"
note "$TEST_NAME: $polls snapshots while running and $kills kill -9s: both topics always at the same offsets; exact"
