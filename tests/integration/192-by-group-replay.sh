#!/usr/bin/env bash
# --by and --sum with scale-out and replays: two members of a consumer
# group, one killed with kill -9 and replaced while lines arrive; three
# static writers on one job whose lines all fall in a few (minute, key)
# rows (deadlock-prone: every commit adds to the same rows); and a replay
# of the topic in two halves, the first killed midway and run again, the
# second run twice. Every table holds exactly the truth per (bucket, key).
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

kt_shape_options access --keys 8
topic=$(kt_new_topic by_group 6)
group=g_$RUN_ID
fast=(-X session.timeout.ms=6000 -X heartbeat.interval.ms=500)

# The group.
db_uri=$(kt_new_db by_group); db=$(kt_db_name "$db_uri")
member() {
  "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --group "$group" \
    --interval 0.2 --max-per-partition 400 "${fast[@]}" "${KT_OPTS[@]}" 2>> "$WORK/member$1.log" &
  pids[$1]=$!; KT_CHILDREN+=($!)
}
offsets_reach() { [[ $(kt_offset_sum "$1" "$2") == "$3" ]]; }
kt_gen "$topic" --shape access --keys 8 --lines 24000 --rate 8000 --per-second 200 \
  --seed "$KT_SEED" --truth "$WORK/truth" > "$WORK/gen" &
gen=$!; KT_CHILDREN+=("$gen")
declare -a pids=()
member 0; member 1
sleep "$((2 + $(kt_rand 2))).$(kt_rand 10)"
kill -9 "${pids[1]}"; wait "${pids[1]}" 2> /dev/null || true
member 2
wait "$gen" || fail "kt-gen failed"
messages=$(sed 's/.*messages=\([0-9]*\).*/\1/' "$WORK/gen")
kt_wait_for 60 offsets_reach "$db" "$topic" "$messages" || fail "the group did not reach the high watermarks"
for i in 0 2; do kt_stop "${pids[$i]}" || fail "member $i: exit on SIGTERM"; done
kt_check_groups "$db" "$WORK/truth"
kt_audit "$db_uri"
members=$(kt_sql "$db" "SELECT COUNT(DISTINCT member) FROM ktally_batches")
note "$TEST_NAME: group: $members members committed, 24000 lines exact"

# Three static writers, tiny batches, few rows: concurrent upserts of the
# same rows lock them in one order (deadlocks are retried, never lost).
sdb_uri=$(kt_new_db by_writers); sdb=$(kt_db_name "$sdb_uri")
stopic=$(kt_new_topic by_writers 6)
kt_gen "$stopic" --shape access --keys 2 --lines 6000 --per-second 1000 --seed "$((KT_SEED + 1))" \
  --truth "$WORK/struth" > "$WORK/sgen" || fail "kt-gen failed"
wpids=()
for share in 0-1 2-3 4-5; do
  for w in 1 2; do   # two writers per share: fenced and deadlocked alike
    "$KTALLY" run --brokers "$KT_BROKERS" --topic "$stopic" --db "$sdb_uri" --partitions "$share" \
      --interval 0 --max-per-partition 5 --exit-when-idle "${KT_OPTS[@]}" 2>> "$WORK/w$share-$w.log" &
    wpids+=($!); KT_CHILDREN+=($!)
  done
done
for p in "${wpids[@]}"; do wait "$p" || fail "a static writer failed: $(tail -3 "$WORK"/w*.log)"; done
kt_check_groups "$sdb" "$WORK/struth"
kt_audit "$sdb_uri"
retried=$(cat "$WORK"/w*.log | grep -c 'committing again' || true)
fenced=$(cat "$WORK"/w*.log | grep -c 'fenced' || true)
note "$TEST_NAME: 6 writers on $(wc -l < "$WORK/struth") rows: exact, $retried commits retried, $fenced fenced"

# Replays in two halves into one table: the first killed midway, then
# run again (it resumes); the second run twice (the rerun changes nothing).
marks=$(kt_watermarks "$topic" | tr ' ' '\n')
zero=$(awk -F: 'NF == 3 { printf "%s%s:0", s, $1; s = "," }' <<< "$marks")
half=$(awk -F: 'NF == 3 { printf "%s%s:%d", s, $1, $3 / 2; s = "," }' <<< "$marks")
high=$(awk -F: 'NF == 3 { printf "%s%s:%s", s, $1, $3; s = "," }' <<< "$marks")
replay=("$KTALLY" replay --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --table by_replay
        --max-per-partition 200 "${KT_OPTS[@]}")
kt_kill9 100 200 "$WORK/replay.log" "${replay[@]}" --from "$zero" --until "$half" || true
"${replay[@]}" --from "$zero" --until "$half" 2>> "$WORK/replay.log" || fail "replay of the first half failed"
for run in 1 2; do
  "${replay[@]}" --from "$half" --until "$high" 2>> "$WORK/replay.log" || fail "replay of the second half failed ($run)"
done
kt_check_groups "$db" "$WORK/truth" by_replay
kt_audit "$db_uri"
note "$TEST_NAME: replayed in two halves, one killed, one twice: exact"
