#!/usr/bin/env bash
# A --group member the group keeps without a partition says why it waits:
# three members over a topic of two partitions, and the one left without
# a partition logs a group-waiting record 5 s after it joined (no
# partitions assigned, the group's 3 members, the topic's 2 partitions),
# and again 30 s later, not more often; the two that read log none. When
# a reader leaves (SIGTERM) the waiting member takes its partition over,
# commits, and the counts are exact against kt-gen --truth. Red if the
# waiting member logs nothing (it used to wait silently), says something
# else than members 3 and partitions 2, logs before 5 s or floods the log,
# a reading member logs group-waiting, or a count is off.
# broker: apache — the group's member count comes from DescribeGroups, which the mock does not answer
source "$(dirname "$0")/lib.sh"

db_uri=$(kt_new_db gwait); db=$(kt_db_name "$db_uri")
topic=$(kt_new_topic gwait 2)
group=gw_$RUN_ID
kt_gen "$topic" --lines 20000 --seed "$KT_SEED" --truth "$WORK/t1" > /dev/null

declare -a pids started
member() {
  "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --group "$group" \
    --interval 0.5 -X session.timeout.ms=6000 -X heartbeat.interval.ms=500 \
    --log-format json 2>> "$WORK/member$1.log" &
  pids[$1]=$!; KT_CHILDREN+=($!); started[$1]=$(date +%s.%N)
}
waiting_records() { kt_log_count group-waiting "$WORK/member$1.log"; }
someone_waits() {
  local i
  for i in 0 1 2; do (($(waiting_records "$i") > 0)) && return 0; done
  return 1
}
member 0; member 1; member 2
kt_wait_for 40 someone_waits || fail "no member logged group-waiting within 40 s (3 members, 2 partitions)"
for i in 0 1 2; do (($(waiting_records "$i") > 0)) && waiter=$i; done
note "member $waiter waits"

# The record: why, the members, the partitions; 5 s after the member
# joined, not sooner (it had no partition from its start).
first=$(jq -Rc 'fromjson? | objects | select(.event == "group-waiting")' "$WORK/member$waiter.log" | head -1)
note "first: $first"
[[ $(jq -r .reason <<< "$first") == none-assigned ]] || fail "reason is not none-assigned: $first"
[[ $(jq -r .members <<< "$first") == 3 ]] || fail "the record does not say 3 members: $first"
[[ $(jq -r .partitions <<< "$first") == 2 ]] || fail "the record does not say 2 partitions: $first"
[[ $(jq -r .group <<< "$first") == "$group" ]] || fail "the record does not name the group: $first"
jq -e '.waited >= 5 and .waited < 10' <<< "$first" > /dev/null || fail "first record not 5-10 s into the wait: $first"
grep -q "no partition" <<< "$(jq -r .message <<< "$first")" || fail "the text does not say why: $first"

# Then every 30 s: the second record about 30 s after the first, none between.
second_comes() { (($(waiting_records "$waiter") >= 2)); }
kt_wait_for 40 second_comes || fail "no second group-waiting record within 40 s of the first"
gap=$(jq -Rn '[inputs | fromjson? | objects | select(.event == "group-waiting") | .waited] | .[1] - .[0]' \
  "$WORK/member$waiter.log")
jq -en "$gap >= 29 and $gap <= 33" > /dev/null || fail "the second record came $gap s after the first, not 30"
for i in 0 1 2; do
  ((i == waiter)) && continue
  (($(waiting_records "$i") == 0)) || fail "member $i reads partitions but logged group-waiting"
done

# A reader leaves: the waiting member takes over and counts.
leaver=$(( (waiter + 1) % 3 ))
kt_stop "${pids[$leaver]}" || fail "member $leaver did not exit 0 on SIGTERM"
# The new lines only after the waiting member holds a partition: produced
# before the rebalance ends, they may all be read by the member that held
# that partition until then, and the waiting member would find nothing to
# commit.
holds_a_partition() { grep -q "group: assigned $topic/\[[0-9]" "$WORK/member$waiter.log"; }
kt_wait_for 30 holds_a_partition || fail "member $waiter was given no partition within 30 s of member $leaver leaving"
kt_gen "$topic" --lines 20000 --seed "$((KT_SEED + 1))" --truth "$WORK/t2" > /dev/null
kt_sum_truths "$WORK/t1" "$WORK/t2" > "$WORK/truth"
offsets_reach() { [[ $(kt_offset_sum "$db" "$topic") == 40000 ]]; }
kt_wait_for 60 offsets_reach || fail "the group did not reach the high watermarks within 60 s"
committed=$(kt_sql "$db" "SELECT COUNT(*) FROM ktally_batches WHERE job = '$topic' AND member LIKE '%-${pids[$waiter]}@%'")
((committed > 0)) || fail "the waiting member (pid ${pids[$waiter]}) never committed after member $leaver left"
for i in 0 1 2; do
  ((i == leaver)) || kt_stop "${pids[$i]}" || fail "member $i did not exit 0 on SIGTERM"
done
kt_check_counts "$db" "$WORK/truth"
kt_audit "$db_uri"
note "$TEST_NAME: the member beyond 2 partitions logged group-waiting at $(jq -r .waited <<< "$first") s and again $gap s later (3 members, 2 partitions), took over after a SIGTERM, 40000 lines exact"
