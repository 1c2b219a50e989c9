#!/usr/bin/env bash
# "Recount the last hour" of a transactional job, in one command, while it
# runs: `reset --by-duration 1h --rebuild --execute`. Its table already
# counted that hour, and the hour's per-minute rows are not the records of
# that offset range (a record's lines carry their own times, and records
# of the hour are spread over many minutes, some shared with older
# records), so deleting the hour's buckets would not do: the reset reads
# the range again, checks it gives what the audit rows recorded, and takes
# exactly those counts back out of the table in the transaction that moves
# the offsets back (fenced: the running instance's batch in flight rolls
# back); the job then counts the range again. While data keeps arriving
# and the instances are killed -9 at random, the table (plain, and --by
# level) must end exactly equal to the oracle's count of every record
# written (tests/support/kt-timed.py, tests/history/lines.py), the audit
# must pass, and the plan must put each partition where Kafka's rule puts
# the moment (or at the start of the batch that holds it). What cannot be
# exact is refused, exit 2, nothing changed: a table missing a row it counted,
# a keyed table with (other) rows (--max-keys folded keys per batch).
# Red before: a transactional job could not move back at all ("refused");
# red if the counts were not taken back (the hour counted twice), or were
# taken back by bucket.
# broker: apache — the moment is looked up by time (offsets-for-times), which the mock broker cannot do
source "$(dirname "$0")/lib.sh"

TIMED=("/usr/bin/python3" "$KT_SRC/tests/support/kt-timed.py")
topic=$(kt_new_topic recount 4)
records=$WORK/records.jsonl
now=$(date +%s%3N)
min=60000
"${TIMED[@]}" produce --brokers "$KT_BROKERS" --topic "$topic" --partitions 0,1,2,3 --records 600 \
  --from-ms $((now - 180 * min)) --until-ms $((now - 2 * min)) --disorder 0.2 --disorder-ms $((30 * min)) \
  --seed "$KT_SEED" --out "$records" || fail "kt-timed produce failed"

db_uri=$(kt_new_db recount); db=$(kt_db_name "$db_uri")
run_opts=(--brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --interval 0.2 --max-per-partition 7
          --log-format json)
plain=(--job plain)
keyed=(--job keyed --table keyed --by level --levels ERROR,INFO)
start() {  # start NAME ARGS...: an instance in the background, its pid in $NAME_pid
  local name=$1; shift
  "$KTALLY" run "${run_opts[@]}" "$@" 2>> "$WORK/$name.log" &
  KT_CHILDREN+=("$!")
  printf -v "${name}_pid" %s "$!"
}
caught_up() {  # caught_up JOB N: the job stored N offsets in all (none before its tables)
  (($(kt_offset_sum "$db" "$1" 2> /dev/null || echo 0) >= $2))
}
start plain "${plain[@]}"
start keyed "${keyed[@]}"
kt_wait_for 120 caught_up plain 600 && kt_wait_for 120 caught_up keyed 600 \
  || fail "the jobs did not count the backlog (plain $(kt_offset_sum "$db" plain), keyed $(kt_offset_sum "$db" keyed) of 600)"

# Data keeps arriving, stamped as it is produced, through all that follows.
"${TIMED[@]}" produce --brokers "$KT_BROKERS" --topic "$topic" --partitions 0,1,2,3 --records 240 --live \
  --rate 20 --seed $((KT_SEED + 1)) --out "$WORK/live.jsonl" > "$WORK/live.out" 2>&1 &
live=$!
KT_CHILDREN+=("$live")

reset() {  # reset JOB ARGS...: the plan as JSON into $WORK/JOB.json
  local job=$1; shift
  "$KTALLY" reset --brokers "$KT_BROKERS" --db "$db_uri" --job "$job" --json "$@" \
    > "$WORK/$job.json" 2> "$WORK/reset.err" || { cat "$WORK/reset.err" >&2; fail "reset --job $job $* failed"; }
}
# Each partition: moved back to the moment's offset, or to the start of the
# batch that holds it; what is taken back must have ERROR lines somewhere.
check_plan() {  # check_plan JOB EXECUTED
  /usr/bin/python3 - "$WORK/$1.json" "$2" "$records" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["executed"] == (sys.argv[2] == "yes"), d["executed"]
ms = d["moment"]["ms"]
recs = [json.loads(l) for l in open(sys.argv[3])]
taken = 0
for p in d["partitions"]:
    found = [r["o"] for r in recs if r["p"] == p["partition"] and r["ts"] >= ms]
    want = min(found) if found else None
    at = p["at"]
    if want is None or want >= p["stored"]:
        # Nothing of the hour counted yet in this partition (or the live
        # records): it may stay.
        assert p["move"] in ("stays", "recount"), p
    else:
        assert at["offset"] == want and at["place"] == "record", (p, want)
        assert p["move"] == "recount" and p["new"] <= want, p
    if p["move"] == "recount":
        taken += p["recount"]["errors"]
        assert p["recount"]["records"] > 0, p
assert taken > 0, "nothing taken back"
print(taken)
PY
}
reset plain --by-duration 1h --rebuild
check_plan plain no > /dev/null || fail "the dry run's plan is wrong"
for job in plain keyed; do
  reset "$job" --by-duration 1h --rebuild --execute
  taken=$(check_plan "$job" yes) || fail "the executed plan of $job is wrong"
  note "$job: took back $taken ERROR lines, counting them again"
done

# kill -9 both, at random, and restart them, while data arrives.
for round in 1 2 3; do
  kill -9 "$plain_pid" "$keyed_pid" 2> /dev/null || true
  wait "$plain_pid" "$keyed_pid" 2> /dev/null || true
  start plain "${plain[@]}"
  start keyed "${keyed[@]}"
  sleep "0.$((3 + $(kt_rand 6)))"
done
wait "$live" || { cat "$WORK/live.out" >&2; fail "the live producer failed"; }
cat "$WORK/live.jsonl" >> "$records"
total=$(wc -l < "$records")
kt_wait_for 120 caught_up plain "$total" && kt_wait_for 120 caught_up keyed "$total" \
  || fail "the jobs did not catch up ($(kt_offset_sum "$db" plain), $(kt_offset_sum "$db" keyed) of $total)"
kt_stop "$plain_pid" || fail "plain did not stop cleanly"
kt_stop "$keyed_pid" || fail "keyed did not stop cleanly"
"${TIMED[@]}" truth --records "$records" > "$WORK/all.truth"
kt_check_counts "$db" "$WORK/all.truth"
"${TIMED[@]}" truth --records "$records" --levels ERROR,INFO --by level > "$WORK/keyed.truth"
kt_sql "$db" "SELECT log_time, level, log_count FROM keyed ORDER BY 1, 2" > "$WORK/keyed.got"
diff "$WORK/keyed.got" "$WORK/keyed.truth" > "$WORK/keyed.diff" \
  || { head "$WORK/keyed.diff" >&2; fail "the keyed table differs from the truth"; }
kt_audit "$db_uri"
fenced=$(kt_log_count fenced "$WORK/plain.log" "$WORK/keyed.log")
note "exact after the recounts; $fenced batches fenced"

# What cannot be exact: refused, exit 2, one line, nothing changed.
snapshot() {
  kt_sql "$db" "SELECT * FROM kafka_offset ORDER BY 1, 2, 3; SELECT COUNT(*) FROM ktally_batches;
                SELECT COUNT(*), SUM(log_count) FROM error_log; SELECT COUNT(*), SUM(log_count) FROM keyed"
}
refused() {  # refused WHAT JOB ARGS...
  local what=$1 job=$2 rc=0; shift 2
  "$KTALLY" reset --brokers "$KT_BROKERS" --db "$db_uri" --job "$job" "$@" > "$WORK/out" 2> "$WORK/err" || rc=$?
  ((rc == 2)) || { cat "$WORK/out" "$WORK/err" >&2; fail "reset --job $job $* exited $rc, not 2"; }
  [[ $(grep -c . "$WORK/err") == 1 ]] || { cat "$WORK/err" >&2; fail "reset $*: not one line"; }
  grep -qF -- "$what" "$WORK/err" || { cat "$WORK/err" >&2; fail "reset $*: does not say '$what'"; }
  kt_dry_run_alike "$rc" "$WORK/err" "$KTALLY" reset --brokers "$KT_BROKERS" --db "$db_uri" --job "$job" "$@"
}
# A row the last hour counted into, deleted by hand (a row lowered but
# still holding more than the hour counted into it cannot be told from
# one that holds older records' counts too).
reset plain --by-duration 1h --rebuild
ranges=$(jq -r '[.partitions[] | select(.move == "recount") | "\(.partition):\(.new)-\(.stored)"] | join(",")' "$WORK/plain.json")
minute=$("${TIMED[@]}" truth --records "$records" --ranges "$ranges" | sed -n '1s/\t.*//p')
[[ -n $minute ]] || fail "the last hour counted nothing?"
kt_sql "$db" "DELETE FROM error_log WHERE log_time = '$minute'"
before=$(snapshot)
refused "the table is not what the job counted" plain --by-duration 1h --rebuild --execute
[[ $(snapshot) == "$before" ]] || fail "a refused recount changed something"
# --max-keys 1 folded keys into (other) rows: what they held per key is lost.
"$KTALLY" run "${run_opts[@]}" --job folded --table folded --by level --levels ERROR,INFO --max-keys 1 \
  --interval 0 --exit-when-idle 2>> "$WORK/folded.log" || fail "the folded job failed"
[[ $(kt_sql "$db" "SELECT COUNT(*) FROM folded WHERE level = '(other)'") -gt 0 ]] || fail "no (other) row to test with"
refused "has an (other) row" folded --by-duration 1h --rebuild --execute
# An idempotent job needs none of this (moving back counts nothing twice).
note "recount: exact with the job running and killed; refusals one line, nothing changed"
