#!/usr/bin/env bash
# Moves by time over more partitions than one offsets-for-times call takes
# (source.c asks in calls of 128, in flight together, since librdkafka
# merges each call's answers with a scan per partition: quadratic): 300
# partitions, each partition's place must be Kafka's rule (kt-timed's
# oracle), for `reset --to-datetime` and a replay by time, whose table
# must equal the oracle's count of its range. Red if the calls' answers
# were put back at the wrong partitions (a chunk off by one), or a chunk
# were lost. The figures before and after (1,024 partitions: 234M
# instructions of ListOffsets work before, 26M after) are in the commit.
# broker: apache — the moment is looked up by time (offsets-for-times), which the mock broker cannot do
source "$(dirname "$0")/lib.sh"

TIMED=("/usr/bin/python3" "$KT_SRC/tests/support/kt-timed.py")
n=300
topic=$(kt_new_topic time_many $n --replication 1)
records=$WORK/records.jsonl
now=$(date +%s%3N)
min=60000
parts=$(seq -s, 0 $((n - 1)))
# Partition i gets records over the last 3 hours, out of order a little;
# every 7th partition none (its place: its end).
"${TIMED[@]}" produce --brokers "$KT_BROKERS" --topic "$topic" --partitions "$(seq -s, 0 $((n - 1)) | tr , '\n' | awk '$1 % 7 != 0' | paste -sd,)" \
  --records 1200 --from-ms $((now - 180 * min)) --until-ms $((now - 2 * min)) --disorder 0.2 \
  --disorder-ms $((20 * min)) --seed "$KT_SEED" --out "$records" || fail "kt-timed produce failed"
db_uri=$(kt_new_db time_many); db=$(kt_db_name "$db_uri")
"$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --mode idempotent --interval 0 \
  --exit-when-idle 2> "$WORK/run.log" || fail "the run failed"
"${TIMED[@]}" truth --records "$records" > "$WORK/all.truth"
kt_check_counts "$db" "$WORK/all.truth"

t=$(( (now - 95 * min) / 1000 * 1000 ))
iso=$(date -u -d "@$((t / 1000))" +%Y-%m-%dT%H:%M:%SZ)
"$KTALLY" reset --brokers "$KT_BROKERS" --db "$db_uri" --job "$topic" --to-datetime "$iso" --json \
  > "$WORK/plan.json" 2> "$WORK/reset.err" || { cat "$WORK/reset.err" >&2; fail "the reset failed"; }
got=$(jq -r '[.partitions[] | "\(.partition):" + (if .at.place == "end" then "end" else (.at.offset | tostring) end)] | join(" ")' "$WORK/plan.json")
want=$("${TIMED[@]}" at --records "$records" --partitions "$parts" --ms "$t")
[[ $got == "$want" ]] || { diff <(tr ' ' '\n' <<< "$got") <(tr ' ' '\n' <<< "$want") | head >&2; fail "the moment's places differ from Kafka's rule"; }

u=$(( (now - 40 * min) / 1000 * 1000 ))
"$KTALLY" replay --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --table rp --log-format json \
  --from-datetime "$iso" --until-datetime "$(date -u -d "@$((u / 1000))" +%Y-%m-%dT%H:%M:%SZ)" \
  2> "$WORK/replay.log" || { tail -3 "$WORK/replay.log" >&2; fail "the replay failed"; }
range=$(jq -Rr 'fromjson? | select(.event == "replay-range") | .range' "$WORK/replay.log")
read -ra from <<< "$want"
read -ra until <<< "$("${TIMED[@]}" at --records "$records" --partitions "$parts" --ms "$u")"
highs=$(kt_watermarks "$topic")
oracle=()
for ((p = 0; p < n; p++)); do
  a=${from[p]#*:} b=${until[p]#*:}
  high=$(tr ' ' '\n' <<< "$highs" | awk -F: -v p=$p '$1 == p { print $3 }')
  [[ $a == end ]] && a=$high
  [[ $b == end ]] && b=$high
  oracle+=("$p:$a-$b")
done
[[ $range == "$(IFS=,; echo "${oracle[*]}")" ]] || fail "the replay resolved another range than Kafka's rule"
"${TIMED[@]}" truth --records "$records" --ranges "$range" > "$WORK/range.truth"
kt_check_counts "$db" "$WORK/range.truth" rp
kt_audit "$db_uri"
