#!/usr/bin/env bash
# Moves by time. `reset --to-datetime/--by-duration` puts each partition at
# the offset Kafka's offsets-for-times gives (the first record whose
# timestamp is at or after the moment), which must be what an oracle
# computes from the records written (tests/support/kt-timed.py): on a
# partition in timestamp order, on one whose CreateTimes are out of order,
# on one whose records are all older (the high watermark: place "end"), on
# an empty one; a moment before the first record (the log start), one after
# the last (every partition at its end), one inside an open transaction
# (read_committed: the last stable offset, not past it). The moment's time
# zone: with an offset, Z, or naive in TZ (Asia/Kolkata), all one; a naive
# time the zone skips (Europe/Berlin's spring gap) refused. --shift-by
# stops at the log's ends and says so. The plan shows all of it in text
# and JSON; a transactional job's move back is refused without --rebuild;
# an idempotent one moved back by time counts nothing twice.
# `replay --from-datetime --until-datetime` and `--last` read exactly the
# oracle's ranges (its table equals their truth), log the range they
# resolved, change nothing when run again, and a named one run again later
# over another range is refused. Red before: none of these options
# existed (exit 2, "Unknown option").
# broker: apache — the mock broker cannot look offsets up by time (it answers none), and only a real broker has a last stable offset below an open transaction
source "$(dirname "$0")/lib.sh"

TIMED=("/usr/bin/python3" "$KT_SRC/tests/support/kt-timed.py")
topic=$(kt_new_topic time_moves 4)
records=$WORK/records.jsonl
now=$(date +%s%3N)
min=60000
hour=$((60 * min))
# p0 in order, p1 a third of it out of order (up to 40 minutes early), both
# over the last three hours; p2 only between 3 and 2 hours ago; p3 empty.
"${TIMED[@]}" produce --brokers "$KT_BROKERS" --topic "$topic" --partitions 0 --records 120 \
  --from-ms $((now - 3 * hour)) --until-ms $((now - 2 * min)) --seed "$KT_SEED" --out "$records" \
  || fail "kt-timed produce failed"
"${TIMED[@]}" produce --brokers "$KT_BROKERS" --topic "$topic" --partitions 1 --records 120 \
  --from-ms $((now - 3 * hour)) --until-ms $((now - 2 * min)) --disorder 0.33 \
  --disorder-ms $((40 * min)) --seed $((KT_SEED + 1)) --out "$records" || fail "kt-timed produce failed"
"${TIMED[@]}" produce --brokers "$KT_BROKERS" --topic "$topic" --partitions 2 --records 30 \
  --from-ms $((now - 3 * hour)) --until-ms $((now - 2 * hour)) --seed $((KT_SEED + 2)) \
  --out "$records" || fail "kt-timed produce failed"
"${TIMED[@]}" truth --records "$records" > "$WORK/all.truth"

tdb_uri=$(kt_new_db time_tx); tdb=$(kt_db_name "$tdb_uri")
idb_uri=$(kt_new_db time_idem); idb=$(kt_db_name "$idb_uri")
run_job() {  # run_job DB_URI MODE: counts the topic up to its end
  "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$1" --mode "$2" --interval 0 \
    --max-per-partition 16 --exit-when-idle 2>> "$WORK/run.log" || fail "run ($2) failed"
}
run_job "$tdb_uri" transactional
run_job "$idb_uri" idempotent
kt_check_counts "$tdb" "$WORK/all.truth"
kt_check_counts "$idb" "$WORK/all.truth"

reset() {  # reset DB_URI ARGS...: the plan as JSON into $WORK/plan.json
  local uri=$1; shift
  "$KTALLY" reset --brokers "$KT_BROKERS" --db "$uri" --job "$topic" --json "$@" \
    > "$WORK/plan.json" 2> "$WORK/reset.err" || { cat "$WORK/reset.err" >&2; fail "reset $* failed"; }
}
refused() {  # refused WHAT ARGS...: exit 2, one line saying WHAT
  local what=$1 rc=0; shift
  "$@" > "$WORK/out" 2> "$WORK/err" || rc=$?
  ((rc == 2)) || { cat "$WORK/out" "$WORK/err" >&2; fail "$* exited $rc, not 2"; }
  [[ $(grep -c . "$WORK/err") == 1 ]] || { cat "$WORK/err" >&2; fail "$*: not one line"; }
  grep -qF -- "$what" "$WORK/err" || { cat "$WORK/err" >&2; fail "$*: does not say '$what'"; }
}
# "P:OFFSET" of each partition where the plan put the moment, "end" where
# it fell after the last record; checks that new == at and place agrees.
plan_at() {
  /usr/bin/python3 - "$WORK/plan.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
out = []
for p in d["partitions"]:
    at = p["at"]
    assert p["new"] == at["offset"], p
    if at["place"] == "end":
        assert at["offset"] == p["high_watermark"], p
        out.append("%d:end" % p["partition"])
    else:
        assert p["log_start"] <= at["offset"] < p["high_watermark"], p
        out.append("%d:%d" % (p["partition"], at["offset"]))
print(" ".join(out))
PY
}
iso() { date -u -d "@$(($1 / 1000))" +%Y-%m-%dT%H:%M:%S; }  # iso MS: naive UTC text, whole seconds
expect_at() {  # expect_at MS WHAT: the plan's places equal the oracle's for MS
  local want got
  want=$("${TIMED[@]}" at --records "$records" --partitions 0,1,2,3 --ms "$1")
  got=$(plan_at) || fail "$2: the plan is inconsistent"
  [[ $got == "$want" ]] || { cat "$WORK/plan.json" >&2; fail "$2: the plan puts it at '$got', Kafka's rule at '$want'"; }
}

# 1. The moment in each partition, three spellings of one moment.
t=$(( (now - 70 * min) / 1000 * 1000 ))
reset "$idb_uri" --to-datetime "$(iso "$t")Z"
expect_at "$t" "--to-datetime $(iso "$t")Z"
cp "$WORK/plan.json" "$WORK/z.json"
[[ $(jq -r .moment.ms "$WORK/z.json") == "$t" ]] || fail "the moment is not $t: $(jq -c .moment "$WORK/z.json")"
[[ $(jq -r .moment.utc "$WORK/z.json") == "$(iso "$t").000Z" ]] || fail "moment.utc: $(jq -c .moment "$WORK/z.json")"
[[ $(jq -r '.partitions[3].at.place' "$WORK/z.json") == end && $(jq -r '.partitions[2].at.place' "$WORK/z.json") == end ]] \
  || fail "the empty and the older partitions are not at their ends"
kolkata=$(TZ=Asia/Kolkata date -d "@$((t / 1000))" +%Y-%m-%dT%H:%M:%S)
TZ=Asia/Kolkata reset "$idb_uri" --to-datetime "$kolkata"
jq -c .partitions "$WORK/plan.json" | cmp -s - <(jq -c .partitions "$WORK/z.json") \
  || fail "a naive time in TZ=Asia/Kolkata ($kolkata) is not the same moment as $(iso "$t")Z"
reset "$idb_uri" --to-datetime "$kolkata+05:30"
jq -c .partitions "$WORK/plan.json" | cmp -s - <(jq -c .partitions "$WORK/z.json") \
  || fail "$kolkata+05:30 is not the same moment as $(iso "$t")Z"
# Out of order: the oracle's first offset at or after t is not the first
# offset after the last record before t. Make sure the draw shows it.
note "the moment $(iso "$t")Z falls at $(plan_at)"

# 2. Before the first record: the log start; after the last: the ends.
reset "$idb_uri" --to-datetime 2000-01-01T00:00:00Z
[[ $(plan_at) == "0:0 1:0 2:0 3:end" ]] || fail "a moment before every record: $(plan_at)"
reset "$idb_uri" --to-datetime "$(iso $((now + 24 * hour)))Z"
[[ $(plan_at) == "0:end 1:end 2:end 3:end" ]] || fail "a moment after every record: $(plan_at)"
jq -e '[.partitions[] | .move == "stays"] | all' "$WORK/plan.json" > /dev/null \
  || fail "the job stands at the end: every partition stays"

# 3. --by-duration: the moment is that long before now.
before=$(date +%s%3N)
reset "$idb_uri" --by-duration 90m
after=$(date +%s%3N)
ms=$(jq -r .moment.ms "$WORK/plan.json")
((ms >= before - 90 * min && ms <= after - 90 * min)) || fail "--by-duration 90m put the moment at $ms (now $before..$after)"
expect_at "$ms" "--by-duration 90m"
[[ $(jq -r .moment.given "$WORK/plan.json") == --by-duration ]] || fail "moment.given: $(jq -c .moment "$WORK/plan.json")"
"$KTALLY" reset --brokers "$KT_BROKERS" --db "$idb_uri" --job "$topic" --by-duration 90m > "$WORK/plan.txt" \
  || fail "the text plan failed"
grep -q "^--by-duration: .*Z; each partition goes to its first record whose timestamp is at or after it" "$WORK/plan.txt" \
  && grep -q "the moment is at [0-9]* (the first record at or after it); " "$WORK/plan.txt" \
  && grep -q "the moment is at [0-9]* (no record at or after it: the high watermark); stays" "$WORK/plan.txt" \
  || { cat "$WORK/plan.txt" >&2; fail "the text plan does not say where the moment fell"; }

# 4. Going back: refused in transactional mode without --rebuild, and an
#    idempotent job moved back by time counts nothing twice.
refused "counts offsets it reads again twice (transactional)" \
  "$KTALLY" reset --brokers "$KT_BROKERS" --db "$tdb_uri" --job "$topic" --by-duration 90m --execute
grep -qF -- "add --rebuild to take [" "$WORK/err" || fail "the refusal does not name --rebuild: $(cat "$WORK/err")"
refused "is idempotent: moved back, it counts nothing twice" \
  "$KTALLY" reset --brokers "$KT_BROKERS" --db "$idb_uri" --job "$topic" --by-duration 90m --rebuild
reset "$idb_uri" --by-duration 90m --execute
jq -e '.executed and ([.partitions[] | select(.move == "back")] | length > 0)' "$WORK/plan.json" > /dev/null \
  || { cat "$WORK/plan.json" >&2; fail "the idempotent job did not move back"; }
run_job "$idb_uri" idempotent
kt_check_counts "$idb" "$WORK/all.truth"
kt_audit "$idb_uri"

# 5. --shift-by: by offsets, stopping at the log's ends.
reset "$idb_uri" --shift-by -7
/usr/bin/python3 - "$WORK/plan.json" <<'PY' || fail "--shift-by -7: wrong plan"
import json, sys
for p in json.load(open(sys.argv[1]))["partitions"]:
    want = max(p["log_start"], p["stored"] - 7)
    assert p["new"] == want and p["clamped"] == (p["stored"] - 7 < p["log_start"]), p
PY
jq -e '.partitions[3].clamped' "$WORK/plan.json" > /dev/null || fail "the empty partition was not stopped at its log start"
reset "$idb_uri" --shift-by 5
jq -e '[.partitions[] | .clamped and .new == .high_watermark and .move == "stays"] | all' "$WORK/plan.json" > /dev/null \
  || { cat "$WORK/plan.json" >&2; fail "--shift-by 5 at the end: not stopped at the high watermarks"; }

# 6. What is refused, in one line.
r() { "$KTALLY" reset --brokers "$KT_BROKERS" --db "$idb_uri" --job "$topic" "$@"; }
refused "--to-datetime: '2024-13-01T00:00:00Z' is no such date or time" r --to-datetime 2024-13-01T00:00:00Z
refused "--to-datetime: expected an ISO 8601 date and time" r --to-datetime yesterday
refused "does not exist in the local time zone" env TZ=Europe/Berlin "$KTALLY" reset --brokers "$KT_BROKERS" \
  --db "$idb_uri" --job "$topic" --to-datetime 2024-03-31T02:30:00
refused "exclude each other" r --to latest --shift-by 1
refused "exclude each other" r --by-duration 1h --to-datetime 2024-05-01T00:00:00Z
refused "--shift-by: expected a whole number of offsets" r --shift-by 1.5
refused "--by-duration" r --by-duration -1h

# 7. Replays by time: exactly the oracle's ranges.
replay() {  # replay TABLE ARGS...: a replay into TABLE, its log into $WORK/TABLE.log
  local table=$1; shift
  "$KTALLY" replay --brokers "$KT_BROKERS" --topic "$topic" --db "$idb_uri" --table "$table" \
    --log-format json "$@" 2> "$WORK/$table.log" || { cat "$WORK/$table.log" >&2; fail "replay $* failed"; }
}
logged_range() {  # logged_range LOG: the range the replay resolved
  jq -Rr 'fromjson? | select(.event == "replay-range") | .range' "$1"
}
# The oracle's range from A to B (or the ends): "P:FROM-UNTIL,...".
oracle_range() {
  local from until p a b out=()
  read -ra from <<< "$("${TIMED[@]}" at --records "$records" --partitions 0,1,2,3 --ms "$1")"
  if [[ -n ${2:-} ]]; then
    read -ra until <<< "$("${TIMED[@]}" at --records "$records" --partitions 0,1,2,3 --ms "$2")"
  else
    until=(0:end 1:end 2:end 3:end)
  fi
  for p in 0 1 2 3; do
    a=${from[p]#*:} b=${until[p]#*:}
    [[ $b == end ]] && b=$(kt_watermarks "$topic" | tr ' ' '\n' | awk -F: -v p="$p" '$1 == p { print $3 }')
    [[ $a == end ]] && a=$b
    out+=("$p:$a-$b")
  done
  (IFS=,; echo "${out[*]}")
}
a=$(( (now - 150 * min) / 1000 * 1000 )) b=$(( (now - 60 * min) / 1000 * 1000 ))
replay r_between --from-datetime "$(iso "$a")Z" --until-datetime "$(iso "$b")+00:00"
want=$(oracle_range "$a" "$b")
[[ $(logged_range "$WORK/r_between.log") == "$want" ]] \
  || fail "replay --from-datetime/--until-datetime resolved $(logged_range "$WORK/r_between.log"), Kafka's rule $want"
"${TIMED[@]}" truth --records "$records" --ranges "$want" > "$WORK/between.truth"
kt_check_counts "$idb" "$WORK/between.truth" r_between
# Run again: the same range, the same replay, finished: nothing added.
replay r_between --from-datetime "$(iso "$a")Z" --until-datetime "$(iso "$b")Z"
kt_check_counts "$idb" "$WORK/between.truth" r_between
replay r_last --last 100m
resolved=$(logged_range "$WORK/r_last.log")
from_ms=$(jq -Rr 'fromjson? | select(.event == "replay-range") | .from_time' "$WORK/r_last.log")
from_ms=$(date -d "$from_ms" +%s%3N)
[[ $resolved == "$(oracle_range "$from_ms")" ]] || fail "replay --last 100m resolved $resolved, Kafka's rule $(oracle_range "$from_ms")"
"${TIMED[@]}" truth --records "$records" --ranges "$resolved" > "$WORK/last.truth"
kt_check_counts "$idb" "$WORK/last.truth" r_last
# A named replay of --last, run again once the log moved on: another range,
# refused (it would resume from the first range's offsets).
replay r_named --job lasthour --last 100m
"${TIMED[@]}" produce --brokers "$KT_BROKERS" --topic "$topic" --partitions 0 --records 1 --live \
  --out "$WORK/later.jsonl" || fail "kt-timed produce failed"
refused "was created with --from-datetime/--until-datetime" "$KTALLY" replay --brokers "$KT_BROKERS" --topic "$topic" --db "$idb_uri" \
  --table r_named --job lasthour --last 100m
refused "exclude --from-datetime" "$KTALLY" replay --brokers "$KT_BROKERS" --topic "$topic" \
  --db "$idb_uri" --from 0:0 --until 0:1 --last 1h
refused "--until-datetime needs --from-datetime" "$KTALLY" replay --brokers "$KT_BROKERS" --topic "$topic" \
  --db "$idb_uri" --until-datetime 2024-05-01T00:00:00Z
refused "is not after --from-datetime" "$KTALLY" replay --brokers "$KT_BROKERS" --topic "$topic" \
  --db "$idb_uri" --from-datetime 2024-05-01T01:00:00Z --until-datetime 2024-05-01T00:00:00+01:00

# 7b. An --until-datetime past the last record: the range ends at each
#     partition's end, and the log then grows inside it (p3, empty until
#     now, gets records stamped now). Run again, the replay takes the range
#     its first run stored and adds nothing. Red before: the rerun resolved
#     p3's new end, another range, another replay: the whole range counted
#     again.
c=$(( (now + 24 * 60 * min) / 1000 * 1000 ))
replay r_future --from-datetime "$(iso "$a")Z" --until-datetime "$(iso "$c")Z"
want=$(oracle_range "$a" "$c")
[[ $(logged_range "$WORK/r_future.log") == "$want" ]] || fail "replay up to tomorrow resolved $(logged_range "$WORK/r_future.log"), Kafka's rule $want"
cat "$records" "$WORK/later.jsonl" > "$WORK/so-far.jsonl"
"${TIMED[@]}" truth --records "$WORK/so-far.jsonl" --ranges "$want" > "$WORK/future.truth"
kt_check_counts "$idb" "$WORK/future.truth" r_future
"${TIMED[@]}" produce --brokers "$KT_BROKERS" --topic "$topic" --partitions 3 --records 2 --live \
  --out "$WORK/p3.jsonl" || fail "kt-timed produce failed"
replay r_future --from-datetime "$(iso "$a")Z" --until-datetime "$(iso "$c")Z"
kt_check_counts "$idb" "$WORK/future.truth" r_future
[[ $(jq -Rr 'fromjson? | select(.event == "replay-range") | .resolved' "$WORK/r_future.log") == first-run \
   && $(logged_range "$WORK/r_future.log") == "$want" ]] || fail "the rerun did not take the stored range"

# 7c. A recount by time never counts what a forward reset skipped: p3's
#     two records skipped, two more counted, then a recount from before the
#     first: it starts after the skip (red before: from its start, the
#     skipped records counted).
reset "$tdb_uri" --to latest --execute
# Counted: everything but what this skipped (p3's two, p0's record of 7).
kept=$(jq -r '[.partitions[] | .partition as $p | if (.skipped | length) > 0
               then "\($p):0-\(.skipped[0][0]),\($p):\(.skipped[0][1])-1000000"
               else "\($p):0-1000000" end] | join(",")' "$WORK/plan.json")
[[ $(jq -c '.partitions[3].skipped' "$WORK/plan.json") == "[[0,2]]" ]] || fail "the forward reset did not skip p3's two records"
"${TIMED[@]}" produce --brokers "$KT_BROKERS" --topic "$topic" --partitions 3 --records 2 --live \
  --out "$WORK/p3.jsonl" || fail "kt-timed produce failed"
run_job "$tdb_uri" transactional
first=$(head -1 "$WORK/p3.jsonl" | jq -r .ts)
reset "$tdb_uri" --to-datetime "$(iso $((first - 1))).$(printf %03d $(((first - 1) % 1000)))Z" --rebuild --execute
jq -e '.partitions[3] | .move == "recount" and .kept_skipped == [0, 2] and .new == 2 and .at.offset == 0' \
  "$WORK/plan.json" > /dev/null || { jq -c '.partitions[3]' "$WORK/plan.json" >&2; fail "the recount by time does not start after the skip"; }
run_job "$tdb_uri" transactional
cat "$records" "$WORK/later.jsonl" "$WORK/p3.jsonl" > "$WORK/tx.jsonl"
"${TIMED[@]}" truth --records "$WORK/tx.jsonl" --ranges "$kept" > "$WORK/tx.truth"
kt_check_counts "$tdb" "$WORK/tx.truth"
kt_audit "$tdb_uri"

# 8. An open transaction: read_committed stops at the last stable offset,
#    and a moment after the committed records falls there, not beyond.
lso=$(jq -r '.partitions[0].high_watermark' "$WORK/z.json")
lso=$((lso + 1))  # the record produced in 7
"${TIMED[@]}" open-txn --brokers "$KT_BROKERS" --topic "$topic" --partition 0 --ts "$(($(date +%s%3N) + 1000))" \
  --id "kt-$RUN_ID" --timeout-ms 60000 > /dev/null || fail "kt-timed open-txn failed"
# Just after the last committed record: only the open transaction's are later.
moment=$(($(jq -r .ts "$WORK/later.jsonl") + 1))
reset "$idb_uri" --to-datetime "$(iso "$moment").$(printf %03d $((moment % 1000)))Z"
[[ $(jq -r '.partitions[0].at.place' "$WORK/plan.json") == end \
   && $(jq -r '.partitions[0].high_watermark' "$WORK/plan.json") == "$lso" \
   && $(jq -r '.partitions[0].new' "$WORK/plan.json") == "$lso" ]] \
  || { jq -c '.partitions[0]' "$WORK/plan.json" >&2; fail "with an open transaction from $lso, the moment does not fall at the last stable offset $lso"; }
note "time moves: exact in every partition; replays exact; refusals one line each"
