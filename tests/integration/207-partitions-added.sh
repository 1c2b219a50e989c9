#!/usr/bin/env bash
# Partitions added to a live topic (KT_MODE transactional or idempotent),
# for a job that started at the end of the topic (--start latest): a live
# run picks the new partitions up and reads each from its log start, so
# the records written into them before it noticed count too; a run killed
# -9, partitions added again and written to while no run is up, a new run
# reads those from their log start as well. A --group member (--start
# earliest: a member cannot tell an added partition from one another
# member has not stored yet, so --start holds there) is given the added
# partitions when the group rebalances on the grown topic. Exact
# throughout, offsets at the high watermarks, `ktally audit` clean. Red if a new partition is
# missed, or starts anywhere but its log start: a partition with no
# stored offset beside partitions that have one is new to a running job,
# not a job's first start (red before: a new partition of a --start
# latest job started at its end, losing what was written into it before
# the run noticed; seed 58929).
# broker: apache — partitions added to a live topic: the mock's topics never grow
source "$(dirname "$0")/lib.sh"

mode=${KT_MODE:-transactional}
topic=$(kt_new_topic grown 2)
db_uri=$(kt_new_db grown); db=$(kt_db_name "$db_uri")
run=("$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --mode "$mode"
     --start latest --interval 0.5 --log-format json -X topic.metadata.refresh.interval.ms=2000)
high_sum() { kt_watermarks "$topic" | tr ' ' '\n' | awk -F: '{ s += $3 } END { print s + 0 }'; }
partitions() { kt_watermarks "$topic" | wc -w; }
at_end() {  # at_end N: N stored offsets, each at its high watermark
  [[ $(kt_sql "$db" "SELECT COUNT(*) FROM kafka_offset WHERE topic = '$topic'" 2> /dev/null) == "$1" \
     && $(kt_offset_sum "$db" "$topic") == "$(high_sum)" ]]
}

# Before the job: not counted (--start latest).
kt_gen "$topic" --lines 500 --seed "$KT_SEED" > /dev/null || fail "kt-gen failed"
"${run[@]}" 2>> "$WORK/run.log" &
pid=$!; KT_CHILDREN+=("$pid")
kt_wait_for 20 at_end 2 || fail "the job did not start at the end of its 2 partitions"
kt_gen "$topic" --lines 1000 --seed $((KT_SEED + 1)) --truth "$WORK/t1" > /dev/null || fail "kt-gen failed"

# Added to the live topic, written to at once.
kt_admin add-partitions "$topic" 4 || fail "cannot add partitions"
kt_gen "$topic" --lines 2000 --seed $((KT_SEED + 2)) --truth "$WORK/t2" > "$WORK/gen2.out" || fail "kt-gen failed"
grep -q "partitions=4" "$WORK/gen2.out" || fail "kt-gen did not write to 4 partitions: $(cat "$WORK/gen2.out")"
kt_wait_for 40 at_end 4 || fail "the live run did not read its 4 partitions to their ends: $(kt_watermarks "$topic") vs $(kt_sql "$db" "SELECT \`partition\`, \`offset\` FROM kafka_offset" | tr '\n' ' ')"
kt_sum_truths "$WORK/t1" "$WORK/t2" > "$WORK/truth"
kt_check_counts "$db" "$WORK/truth"
kt_log_has new-partitions "$WORK/run.log" || fail "no new-partitions line"

# Killed -9; partitions added and written to with no run up.
kill -9 "$pid"; wait "$pid" 2> /dev/null || true
kt_admin add-partitions "$topic" 6 || fail "cannot add partitions"
kt_gen "$topic" --lines 1200 --seed $((KT_SEED + 3)) --truth "$WORK/t3" > /dev/null || fail "kt-gen failed"
"${run[@]}" --exit-when-idle 2>> "$WORK/run.log" || fail "the run after the kill failed"
at_end 6 || fail "the run did not read its 6 partitions to their ends: $(kt_watermarks "$topic")"
kt_sum_truths "$WORK/t1" "$WORK/t2" "$WORK/t3" > "$WORK/truth"
kt_check_counts "$db" "$WORK/truth"
kt_audit "$db_uri"

# A group member: the group rebalances when the topic grows.
gtopic=$(kt_new_topic grown_group 2)
gdb_uri=$(kt_new_db grown_group); gdb=$(kt_db_name "$gdb_uri")
kt_gen "$gtopic" --lines 500 --seed $((KT_SEED + 4)) --truth "$WORK/g1" > /dev/null || fail "kt-gen failed"
"$KTALLY" run --brokers "$KT_BROKERS" --topic "$gtopic" --db "$gdb_uri" --mode "$mode" \
  --start earliest --interval 0.5 --log-format json --group "g$RUN_ID" \
  -X topic.metadata.refresh.interval.ms=2000 2>> "$WORK/group.log" &
gpid=$!; KT_CHILDREN+=("$gpid")
group_at_end() {  # group_at_end N: N stored offsets, each at its high watermark
  [[ $(kt_sql "$gdb" "SELECT COUNT(*) FROM kafka_offset WHERE topic = '$gtopic'" 2> /dev/null) == "$1" \
     && $(kt_offset_sum "$gdb" "$gtopic") == "$(kt_watermarks "$gtopic" | tr ' ' '\n' | awk -F: '{ s += $3 } END { print s + 0 }')" ]]
}
kt_wait_for 30 group_at_end 2 || fail "the group member did not read its 2 partitions"
kt_admin add-partitions "$gtopic" 4 || fail "cannot add partitions"
kt_gen "$gtopic" --lines 2000 --seed $((KT_SEED + 5)) --truth "$WORK/g2" > /dev/null || fail "kt-gen failed"
kt_wait_for 40 group_at_end 4 || fail "the group member did not read its 4 partitions to their ends: $(kt_watermarks "$gtopic")"
kt_stop "$gpid" || fail "the group member did not exit 0 on SIGTERM"
kt_sum_truths "$WORK/g1" "$WORK/g2" > "$WORK/gtruth"
kt_check_counts "$gdb" "$WORK/gtruth"
kt_audit "$gdb_uri"
kt_admin delete "$topic" "$gtopic"
