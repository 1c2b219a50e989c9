#!/usr/bin/env bash
# Scale out. Three instances in one consumer group over 12 partitions while
# data flows, started late, stopped with SIGTERM, killed with kill -9 and
# restarted at random: the counts are exact, every offset reaches its high
# watermark, and the audit finds no range committed twice. Then a static
# --partitions split over two instances, and a deadlock-prone load (many
# writers, few minutes, tiny batches).
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

db_uri=$(kt_new_db group); db=$(kt_db_name "$db_uri")
topic=$(kt_new_topic group 12)
group=g_$RUN_ID
# The mock broker completes a rebalance only after session.timeout.ms - 1 s
# (a real broker as soon as every member rejoined): keep it short here.
fast=(-X session.timeout.ms=6000 -X heartbeat.interval.ms=500)
member() {
  "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --group "$group" \
    --interval 0.3 --max-per-partition 1500 "${fast[@]}" --log-format json 2>> "$WORK/member$1.log" &
  pids[$1]=$!; KT_CHILDREN+=($!)
}
offsets_reach() { [[ $(kt_offset_sum "$db" "$topic") == "$1" ]]; }

kt_gen "$topic" --lines 200000 --seed 87 --rate 8000 --truth "$WORK/truth" > "$WORK/gen" &
gen=$!; KT_CHILDREN+=("$gen")
declare -a pids=()
member 0
faults=0; terms=0; kills=0; starts=1
deadline=$((SECONDS + 30))
while ((SECONDS < deadline)); do
  sleep "$((1 + $(kt_rand 3))).$(kt_rand 10)"
  i=$(kt_rand 3)
  if [[ -z ${pids[$i]:-} ]] || ! kill -0 "${pids[$i]}" 2> /dev/null; then
    member "$i"; starts=$((starts + 1))
  elif (($(kt_rand 2))); then
    kt_stop "${pids[$i]}" || fail "member $i did not exit 0 on SIGTERM"
    pids[$i]=""; terms=$((terms + 1))
  else
    kill -9 "${pids[$i]}"; wait "${pids[$i]}" 2> /dev/null || true
    pids[$i]=""; kills=$((kills + 1))
  fi
  faults=$((faults + 1))
done
wait "$gen" || fail "kt-gen failed"
messages=$(sed 's/.*messages=\([0-9]*\).*/\1/' "$WORK/gen")
for i in 0 1 2; do
  if [[ -z ${pids[$i]:-} ]] || ! kill -0 "${pids[$i]}" 2> /dev/null; then member "$i"; fi
done
kt_wait_for 90 offsets_reach "$messages" || fail "the group did not reach the high watermarks within 90 s"
for i in 0 1 2; do kt_stop "${pids[$i]}" || fail "member $i: exit on SIGTERM"; done
kt_check_counts "$db" "$WORK/truth"
kt_audit "$db_uri"
members=$(kt_sql "$db" "SELECT COUNT(DISTINCT member) FROM ktally_batches WHERE job = '$topic'")
fenced=$(kt_log_count fenced "$WORK"/member*.log)
rebalanced=$(jq -Rn '[inputs | fromjson? | objects | select(.event == "abandoned" and .cause == "rebalance")]
                     | length' "$WORK"/member*.log)
note "$TEST_NAME: group: $faults faults ($starts starts, $terms SIGTERM, $kills kill -9), $members members committed, $rebalanced batches abandoned to rebalances, $fenced fenced, 200000 lines exact, audit whole"

# A static split over two instances covers the topic exactly.
sdb_uri=$(kt_new_db static); sdb=$(kt_db_name "$sdb_uri")
"$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$sdb_uri" --partitions 0-5 \
  --interval 0 --exit-when-idle 2> "$WORK/static0.log" &
a=$!
"$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$sdb_uri" --partitions 6-8,9,10-11 \
  --interval 0 --exit-when-idle 2> "$WORK/static1.log" || fail "static share 6-11 failed"
wait "$a" || fail "static share 0-5 failed"
kt_check_counts "$sdb" "$WORK/truth"
[[ $(kt_sql "$sdb" "SELECT COUNT(*) FROM kafka_offset") == 12 ]] || fail "the static split did not cover 12 partitions"
rc=0; "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$sdb_uri" --partitions 11-12 \
  --exit-when-idle 2> "$WORK/err" || rc=$?
[[ $rc == 2 ]] || fail "--partitions beyond the topic: exit $rc, expected 2"

# Deadlock-prone: five writers on one job, every line in the same few
# minutes, one record per partition per batch.
ddb_uri=$(kt_new_db deadlock); ddb=$(kt_db_name "$ddb_uri")
dtopic=$(kt_new_topic deadlock 6)
kt_gen "$dtopic" --lines 6000 --seed 88 --start "2017-07-30 14:00:00" --truth "$WORK/dtruth" > "$WORK/dgen"
dpids=()
for ((w = 0; w < 5; w++)); do
  "$KTALLY" run --brokers "$KT_BROKERS" --topic "$dtopic" --db "$ddb_uri" --interval 0 \
    --max-per-partition 7 --log-format json 2> "$WORK/dl$w.log" &
  dpids+=($!); KT_CHILDREN+=($!)
done
offsets_reach_d() { [[ $(kt_offset_sum "$ddb" "$dtopic") == 6000 ]]; }
kt_wait_for 120 offsets_reach_d || fail "the deadlock-prone load did not finish within 120 s"
for pid in "${dpids[@]}"; do kt_stop "$pid" || fail "a writer: exit on SIGTERM"; done
kt_check_counts "$ddb" "$WORK/dtruth"
kt_audit "$ddb_uri"
retried=$(kt_log_count commit-again "$WORK"/dl*.log)
dfenced=$(kt_log_count fenced "$WORK"/dl*.log)
note "$TEST_NAME: static split exact; 5 writers over $(wc -l < "$WORK/dtruth") minutes: exact, $dfenced fenced, $retried commits retried after a deadlock"
