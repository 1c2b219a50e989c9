#!/usr/bin/env bash
# `ktally jobs` lists every job of a database (kind, mode, offsets, table,
# topics, last commit, lag with --brokers), and a job name that is not one
# of them is exit 2 naming the known ones in status, audit, reset and
# forget. Before, a mistyped name was silently a new job: `status --job
# typo` showed the whole topic as lag and exited 0, `audit --job typo`
# reported OK over 0 chains. Names with every character a job may have
# ('.', '-', '_'), and two that differ where SQL's LIKE would not see it
# ('a_b', 'aXb'): forgetting one leaves the other whole.
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

db_uri=$(kt_new_db jobs); db=$(kt_db_name "$db_uri")
t1=$(kt_new_topic jobs1 2); t2=$(kt_new_topic jobs2 1)
json() {  # json FILE EXPR: a Python expression over the document `d`
  /usr/bin/python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@"
}
refused() {  # refused WHAT COMMAND...: exit 2, one line naming WHAT
  local what=$1 rc=0; shift
  "$KTALLY" "$@" > "$WORK/out" 2> "$WORK/err" || rc=$?
  ((rc == 2)) || { cat "$WORK/out" "$WORK/err" >&2; fail "$1 exited $rc, not 2: $*"; }
  [[ $(grep -c . "$WORK/err") == 1 ]] || { cat "$WORK/err" >&2; fail "$1: not one line"; }
  grep -qF -- "$what" "$WORK/err" || { cat "$WORK/err" >&2; fail "$1: does not say '$what'"; }
  [[ ! -s "$WORK/out" ]] || { cat "$WORK/out" >&2; fail "$1: printed output for an unknown job"; }
}

# An empty database: no jobs, and a job name is unknown everywhere.
"$KTALLY" jobs --db "$db_uri" > "$WORK/j0" || fail "jobs failed on an empty database"
grep -q "^no jobs in .*/$db" "$WORK/j0" || { cat "$WORK/j0" >&2; fail "jobs: no 'no jobs'"; }
"$KTALLY" jobs --db "$db_uri" --json > "$WORK/j0.json" || fail "jobs --json failed"
[[ $(json "$WORK/j0.json" 'd') == "[]" ]] || fail "jobs --json of an empty database is not []"
refused "no job '$t1' in" status --brokers "$KT_BROKERS" --topic "$t1" --db "$db_uri"
grep -q "no job has run there yet" "$WORK/err" || fail "status on an empty database does not say so"
[[ $(kt_sql "$db" "SHOW TABLES" | wc -l) == 0 ]] || fail "a refused status created tables"

kt_gen "$t1" --lines 2000 --seed 160 --truth "$WORK/t1.truth" > /dev/null || fail "kt-gen failed"
kt_gen "$t2" --lines 500 --seed 161 --truth "$WORK/t2.truth" > /dev/null || fail "kt-gen failed"
run() {
  "$KTALLY" run --brokers "$KT_BROKERS" --db "$db_uri" --interval 0 --exit-when-idle "$@" \
    2>> "$WORK/run.log" || { tail -5 "$WORK/run.log" >&2; fail "run $* failed"; }
}
run --topic "$t1" --job a_b --partitions 0 --share-table
run --topic "$t1" --job aXb --partitions 1 --share-table
run --topic "$t2" --job Odd.job-2_x --max-per-partition 100
kt_check_counts "$db" <(kt_sum_truths "$WORK/t1.truth" "$WORK/t2.truth")

# The list: sorted by name, what each is, its last commit; lag with --brokers.
kt_gen "$t2" --lines 300 --seed 162 --start "2018-01-01 00:00:00" > /dev/null || fail "kt-gen failed"
"$KTALLY" jobs --db "$db_uri" > "$WORK/j1" || fail "jobs failed"
[[ $(awk 'NR > 1 && !/^lag/ { print $1, $2, $3, $4, $5, $6 }' "$WORK/j1" | tr '\n' ';') \
   == "Odd.job-2_x count transactional mysql error_log $t2;aXb count transactional mysql error_log $t1;a_b count transactional mysql error_log $t1;" ]] \
  || { cat "$WORK/j1" >&2; fail "jobs does not list the three jobs as they are"; }
grep -q "^lag: unknown (give --brokers" "$WORK/j1" || fail "jobs without --brokers does not say the lag is unknown"
"$KTALLY" jobs --db "$db_uri" --brokers "$KT_BROKERS" --json > "$WORK/j1.json" || fail "jobs --json failed"
[[ $(json "$WORK/j1.json" '[(j["job"], j["topics"], j["lag"], j["batches"] > 0, j["last_commit"] is not None) for j in d]') \
   == "[('Odd.job-2_x', ['$t2'], 300, True, True), ('aXb', ['$t1'], 0, True, True), ('a_b', ['$t1'], 0, True, True)]" ]] \
  || { cat "$WORK/j1.json" >&2; fail "jobs --json: jobs, topics or lag wrong"; }
"$KTALLY" jobs --db "$db_uri" --brokers "$KT_BROKERS" > "$WORK/j2" || fail "jobs --brokers failed"
[[ $(awk '$1 == "Odd.job-2_x" { print $NF }' "$WORK/j2") == 300 ]] || { cat "$WORK/j2" >&2; fail "jobs: lag column wrong"; }

# A name that is not a job, in each command that takes one.
known="its jobs: Odd.job-2_x, aXb, a_b"
refused "no job 'aYb' in" status --brokers "$KT_BROKERS" --topic "$t1" --db "$db_uri" --job aYb
grep -qF "$known" "$WORK/err" || { cat "$WORK/err" >&2; fail "status does not name the known jobs"; }
refused "no job 'aYb' in" audit --db "$db_uri" --job aYb
refused "no job 'aYb' in" reset --brokers "$KT_BROKERS" --db "$db_uri" --job aYb --to latest --execute
refused "no job 'aYb' in" forget --db "$db_uri" --job aYb --execute
refused "job a_b does not read topic $t2" status --brokers "$KT_BROKERS" --topic "$t2" --db "$db_uri" --job a_b
refused "not a valid job name" forget --db "$db_uri" --job "a%b" --execute
"$KTALLY" status --brokers "$KT_BROKERS" --topic "$t1" --db "$db_uri" --job aXb > /dev/null \
  || fail "status of a known job failed"

# Forget a_b: aXb, which LIKE 'a_b' would match, keeps every row.
before=$(kt_sql "$db" "SELECT COUNT(*) FROM kafka_offset WHERE job = 'aXb'")/$(kt_sql "$db" "SELECT COUNT(*) FROM ktally_batches WHERE job = 'aXb'")
"$KTALLY" forget --db "$db_uri" --job a_b --execute > "$WORK/f" 2> "$WORK/f.err" || { cat "$WORK/f.err" >&2; fail "forget a_b failed"; }
[[ $(kt_sql "$db" "SELECT COUNT(*) FROM kafka_offset WHERE job = 'aXb'")/$(kt_sql "$db" "SELECT COUNT(*) FROM ktally_batches WHERE job = 'aXb'") == "$before" ]] \
  || fail "forgetting a_b touched aXb's rows"
[[ $(kt_sql "$db" "SELECT COUNT(*) FROM kafka_offset WHERE job = 'a_b'") == 0 ]] || fail "a_b's offsets are still there"
"$KTALLY" jobs --db "$db_uri" --json > "$WORK/j3.json" || fail "jobs failed"
[[ $(json "$WORK/j3.json" '[j["job"] for j in d]') == "['Odd.job-2_x', 'aXb']" ]] || fail "jobs still lists a_b"
refused "its jobs: Odd.job-2_x, aXb" audit --db "$db_uri" --job a_b
kt_audit "$db_uri"
note "$TEST_NAME: jobs lists 3 jobs with their lag; unknown names refused by status, audit, reset and forget; a_b forgotten, aXb whole"
