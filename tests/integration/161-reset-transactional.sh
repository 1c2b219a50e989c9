#!/usr/bin/env bash
# `ktally reset` of a transactional job. Moves that would count offsets
# twice (back), or leave the log (beyond the high watermark), or name a
# partition the job does not store, are refused with exit 2 and one line,
# nothing changed; without --execute it is a dry run that says how to
# apply it. Moving forward while `run` is live and data flows: the running
# instance is fenced, never doubles, and error_log plus the skipped ranges
# (replayed into a table of their own) equals kt-gen's truth; the audit
# chain stays whole (each skip leaves its audit row). --execute twice: the
# second changes nothing. Before, none of this existed: the offsets were
# edited by hand in SQL.
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

db_uri=$(kt_new_db reset_tx); db=$(kt_db_name "$db_uri")
topic=$(kt_new_topic reset_tx 4)
reset() { "$KTALLY" reset --brokers "$KT_BROKERS" --db "$db_uri" --job "$topic" "$@"; }
refused() {  # refused WHAT ARGS...: reset ARGS is exit 2, one line naming WHAT
  local what=$1 rc=0; shift
  reset "$@" > "$WORK/out" 2> "$WORK/err" || rc=$?
  ((rc == 2)) || { cat "$WORK/out" "$WORK/err" >&2; fail "reset $* exited $rc, not 2"; }
  [[ $(grep -c . "$WORK/err") == 1 ]] || { cat "$WORK/err" >&2; fail "reset $*: not one line"; }
  grep -qF -- "$what" "$WORK/err" || { cat "$WORK/err" >&2; fail "reset $*: does not say '$what'"; }
  # A dry run refuses alike (not where --execute is the mistake).
  [[ " $* " != *" --execute "* || " $* " == *" --dry-run "* ]] || kt_dry_run_alike "$rc" "$WORK/err" reset "$@"
}
snapshot() {
  kt_sql "$db" "SELECT job, topic, \`partition\`, \`offset\` FROM kafka_offset ORDER BY 1, 2, 3;
                SELECT COUNT(*), COALESCE(SUM(log_count), 0) FROM error_log;
                SELECT COUNT(*) FROM ktally_batches"
}

# 1. What is refused, and the dry run.
kt_gen "$topic" --lines 4000 --seed 1610 --truth "$WORK/a.truth" > /dev/null || fail "kt-gen failed"
"$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --interval 0 --exit-when-idle \
  --max-per-partition 400 2>> "$WORK/run.log" || fail "the first run failed"
before=$(snapshot)
refused "back from 1000 to 0 would count [0, 1000) again into error_log" --to earliest --execute
refused "back from 1000 to 999 would count [999, 1000) again" --to 2:999 --execute
refused "$topic/0:1001 is beyond the high watermark 1000" --to 0:1001 --execute
refused "stores no offset for $topic/7" --to 7:0 --execute
refused "--rebuild counts again what the job counted from where it goes back to: not with --to latest" --to latest --rebuild
refused "--dry-run and --execute exclude each other" --to latest --dry-run --execute
refused "--to: expected earliest, latest, PARTITION:OFFSET" --to 0:x
id=$(kt_sql "$db" "SELECT MAX(id) FROM ktally_batches WHERE from_offset = 400")
refused "back from 1000 to 400 would count [400, 1000) again" --to "batch:$id" --execute
refused "has no audited batch of that id" --to "batch:999999" --execute
[[ $(snapshot) == "$before" ]] || fail "a refused reset changed the database"

kt_gen "$topic" --lines 400 --seed 1611 --start "2018-01-01 00:00:00" --truth "$WORK/b.truth" \
  > /dev/null || fail "kt-gen failed"
reset --to latest > "$WORK/dry" 2>&1 || { cat "$WORK/dry" >&2; fail "the dry run failed"; }
grep -q "forward: offsets \[1000, 1100) will never be counted" "$WORK/dry" \
  || { cat "$WORK/dry" >&2; fail "the dry run does not say what is skipped"; }
grep -q "^dry run: nothing changed; run the same command with --execute to apply it" "$WORK/dry" \
  || fail "the dry run does not say how to apply it"
[[ $(snapshot) == "$before" ]] || fail "the dry run changed the database"

# 2. Forward, twice, while a run is live and data flows.
kt_gen "$topic" --lines 40000 --seed 1612 --rate 12000 --start "2019-01-01 00:00:00" \
  --truth "$WORK/c.truth" > /dev/null &
gen=$!; KT_CHILDREN+=("$gen")
"$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --interval 0.05 \
  --max-per-partition 300 2>> "$WORK/live.log" &
run=$!; KT_CHILDREN+=("$run")
moving() { (($(kt_offset_sum "$db" "$topic") > $1)); }
kt_wait_for 20 moving 6000 || fail "the live run does not move"
reset --to latest --execute --json > "$WORK/r1.json" 2>> "$WORK/reset.log" || fail "reset 1 failed"
# More after the reset, whether or not the first generator is done (on a
# loaded machine it may be): the run must go on past the new offsets.
kt_gen "$topic" --lines 4000 --seed 1613 --start "2020-01-01 00:00:00" --truth "$WORK/d.truth" \
  > /dev/null || fail "kt-gen failed"
kt_wait_for 20 moving "$(/usr/bin/python3 -c 'import json,sys; print(sum(p["new"] for p in json.load(open(sys.argv[1]))["partitions"]) + 2000)' "$WORK/r1.json")" \
  || fail "the live run does not go on after the reset"
reset --to latest --execute --json > "$WORK/r2.json" 2>> "$WORK/reset.log" || fail "reset 2 failed"
wait "$gen" || fail "kt-gen failed"
high=$(kt_watermarks "$topic" | tr ' ' '\n' | awk -F: 'NF == 3 { s += $3 } END { print s }')
kt_wait_for 30 moving "$((high - 1))" || fail "the live run did not reach the high watermarks ($high)"
kt_stop "$run" || fail "the live run did not exit 0"
grep -q "was fenced\|fenced" "$WORK/live.log" && fenced=yes || fenced=no

# What the resets skipped, replayed into a table of their own: with
# error_log, it is everything produced, each line once.
for r in r1 r2; do
  read -r from until < <(/usr/bin/python3 - "$WORK/$r.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
# Nothing to execute when the live run had already reached the high
# watermarks (a loaded machine: the generator was done before the reset).
assert (d["executed"] or not d["changes"]) and d["job"] and not d["rebuild"], d
parts = [(p["partition"], s) for p in d["partitions"] for s in p["skipped"]]
for p in d["partitions"]:
    assert p["move"] in ("forward", "stays"), p
    assert p["skipped"] == ([[p["stored"], p["new"]]] if p["new"] > p["stored"] else []), p
print(",".join("%d:%d" % (p, s[0]) for p, s in parts) or "-",
      ",".join("%d:%d" % (p, s[1]) for p, s in parts) or "-")
PY
)
  [[ $from != - ]] || continue
  "$KTALLY" replay --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --from "$from" \
    --until "$until" --table skipped 2>> "$WORK/replay.log" || fail "the replay of $r's skips failed"
done
kt_sql "$db" "SELECT log_time, log_count FROM error_log" > "$WORK/counted.tsv"
# No replay when neither reset skipped anything (the live run was at the
# high watermarks before each): then nothing made the table.
: > "$WORK/skipped.tsv"
[[ -z $(kt_sql "$db" "SHOW TABLES LIKE 'skipped'") ]] ||
  kt_sql "$db" "SELECT log_time, log_count FROM skipped" > "$WORK/skipped.tsv"
kt_sum_truths "$WORK/a.truth" "$WORK/b.truth" "$WORK/c.truth" "$WORK/d.truth" > "$WORK/all.truth"
kt_sum_truths "$WORK/counted.tsv" "$WORK/skipped.tsv" | diff - "$WORK/all.truth" > "$WORK/diff" \
  || { head "$WORK/diff" >&2; fail "error_log + the skipped ranges differ from the truth"; }
kt_audit "$db_uri"
n1=$(/usr/bin/python3 -c 'import json,sys; print(sum(s[1]-s[0] for p in json.load(open(sys.argv[1]))["partitions"] for s in p["skipped"]))' "$WORK/r1.json")

# 3. The same reset again: nothing to change, nothing changed.
before=$(snapshot)
reset --to latest --execute > "$WORK/again" || fail "reset --execute again failed"
grep -q "^nothing to change" "$WORK/again" || { cat "$WORK/again" >&2; fail "a second reset had something to change"; }
[[ $(snapshot) == "$before" ]] || fail "a second reset changed the database"
note "$TEST_NAME: 9 refusals changed nothing; 2 resets forward under a live run ($n1 offsets skipped by the first; fenced: $fenced), error_log + skips exact"
