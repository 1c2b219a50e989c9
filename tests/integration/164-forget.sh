#!/usr/bin/env bash
# `ktally forget`: a dry run by default (counts what would go, changes
# nothing); --execute removes the job's offsets, audit rows, covered sets
# and identity in one transaction and says what stays (its output rows).
# The audit still adds up (what the forgotten batches recorded is kept in
# ktally_forgotten). A job of the same name run again is a fresh job: it
# starts at its --start and counts again into the table that kept the old
# counts. Both modes; a second forget finds no such job. A dry run refuses
# what --execute refuses.
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

json() {  # json FILE EXPR: a Python expression over the document `d`
  /usr/bin/python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@"
}
snapshot() {
  kt_sql "$1" "SELECT COUNT(*) FROM kafka_offset; SELECT COUNT(*) FROM ktally_batches;
               SELECT COUNT(*) FROM ktally_job; SELECT COALESCE(SUM(log_count), 0) FROM error_log"
}

for mode in transactional idempotent; do
  db_uri=$(kt_new_db "forget_$mode"); db=$(kt_db_name "$db_uri")
  topic=$(kt_new_topic "forget_$mode" 3)
  job=Fj.$mode-1_x
  run() {
    timeout 60 "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --job "$job" \
      --mode "$mode" --interval 0 --exit-when-idle --log-format json "$@" 2>> "$WORK/run_$mode.log" \
      || { tail -5 "$WORK/run_$mode.log" >&2; fail "$mode: run $* failed"; }
  }
  forget() { "$KTALLY" forget --db "$db_uri" --job "$job" "$@"; }
  kt_gen "$topic" --lines 3000 --seed 1640 --truth "$WORK/a.truth" > /dev/null || fail "kt-gen failed"
  run --max-per-partition 200
  kt_check_counts "$db" "$WORK/a.truth"

  # The dry run: what would go, what stays, nothing changed.
  before=$(snapshot "$db")
  forget > "$WORK/dry_$mode" 2>&1 || { cat "$WORK/dry_$mode" >&2; fail "$mode: the dry run failed"; }
  [[ $(snapshot "$db") == "$before" ]] || fail "$mode: the dry run changed the database"
  grep -q "^  kafka_offset *3 rows: where it stands" "$WORK/dry_$mode" \
    && grep -q "^  ktally_batches *15 rows: its audit trail" "$WORK/dry_$mode" \
    && grep -q "^  ktally_job *1 row: what it is" "$WORK/dry_$mode" \
    && grep -q "^  error_log: what the job counted into it (its batches recorded $(awk -F'\t' '{ n += $2 } END { print n }' "$WORK/a.truth") ERROR lines" "$WORK/dry_$mode" \
    && grep -q "^warning: job $job committed [0-9]* s ago: stop every instance" "$WORK/dry_$mode" \
    && grep -q "^dry run: nothing changed; run the same command with --execute" "$WORK/dry_$mode" \
    || { cat "$WORK/dry_$mode" >&2; fail "$mode: the dry run does not say what goes and what stays"; }
  if [[ $mode == idempotent ]]; then
    grep -q "^  ktally_coverage *3 rows: the offsets its counts include" "$WORK/dry_$mode" \
      && grep -q "^  error_log_topic: its [0-9]* rows (job $job), in the sums of error_log" "$WORK/dry_$mode" \
      || { cat "$WORK/dry_$mode" >&2; fail "idempotent: covered sets and per-partition rows not said"; }
  fi

  # Forgotten: nothing of it left but its output, and the audit adds up.
  forget --execute > "$WORK/exec_$mode" 2>&1 || { cat "$WORK/exec_$mode" >&2; fail "$mode: forget failed"; }
  grep -q "^done: job $job is forgotten" "$WORK/exec_$mode" || fail "$mode: forget does not say it is done"
  for table in kafka_offset ktally_batches ktally_job ktally_coverage; do
    [[ $mode == transactional && $table == ktally_coverage ]] && continue
    [[ $(kt_sql "$db" "SELECT COUNT(*) FROM $table WHERE job = '$job'") == 0 ]] \
      || fail "$mode: $table still holds rows of the job"
  done
  kt_check_counts "$db" "$WORK/a.truth"
  "$KTALLY" jobs --db "$db_uri" --json > "$WORK/jobs.json" || fail "jobs failed"
  [[ $(json "$WORK/jobs.json" 'd') == "[]" ]] || fail "$mode: jobs still lists the forgotten job"
  kt_audit "$db_uri"
  grep -q "audit: note: error_log holds [0-9]* ERROR lines counted by job $job, since forgotten" "$WORK/audit.out" \
    || { cat "$WORK/audit.out" >&2; fail "$mode: the audit does not account for the forgotten job"; }
  rc=0; forget --execute > /dev/null 2> "$WORK/again" || rc=$?
  ((rc == 2)) && grep -q "no job '$job' in" "$WORK/again" || fail "$mode: a second forget: exit $rc"

  # The same name again is a fresh job: it starts at --start, and counts
  # into the table that kept the old counts.
  kt_gen "$topic" --lines 600 --seed 1641 --start "2018-01-01 00:00:00" --truth "$WORK/b.truth" > /dev/null \
    || fail "kt-gen failed"
  if [[ $mode == transactional ]]; then
    : > "$WORK/run_$mode.log"
    run
    # Its three partitions new again, the whole topic (3000 + 600 lines) to read.
    kt_log_match ".event == \"new-partitions\" and .job == \"$job\" and .partitions == 3
                  and .lag == 3600" "$WORK/run_$mode.log" \
      || { grep new-partitions "$WORK/run_$mode.log" >&2; fail "$mode: the job run again did not start afresh"; }
    kt_check_counts "$db" <(kt_sum_truths "$WORK/a.truth" "$WORK/a.truth" "$WORK/b.truth")
  else
    run --start latest
    kt_gen "$topic" --lines 300 --seed 1642 --start "2019-01-01 00:00:00" --truth "$WORK/c.truth" > /dev/null \
      || fail "kt-gen failed"
    run --start latest
    kt_check_counts "$db" <(kt_sum_truths "$WORK/a.truth" "$WORK/c.truth")
    # Its rows are under one name with the forgotten job's: not rebuilt.
    rc=0; "$KTALLY" reset --brokers "$KT_BROKERS" --db "$db_uri" --job "$job" --to earliest --rebuild \
      --execute > /dev/null 2> "$WORK/rb" || rc=$?
    ((rc == 2)) && grep -q "also hold the counts of an earlier job $job that was forgotten" "$WORK/rb" \
      || { cat "$WORK/rb" >&2; fail "idempotent: a rebuild over a forgotten job's rows: exit $rc"; }
    kt_dry_run_alike "$rc" "$WORK/rb" "$KTALLY" reset --brokers "$KT_BROKERS" --db "$db_uri" \
      --job "$job" --to earliest --rebuild --execute
  fi
  kt_audit "$db_uri"
  note "$TEST_NAME: $mode: dry run changed nothing; forgotten; audit adds up; run again as a fresh job"
done

# A view where one of ktally's own tables must be (forget writes
# ktally_forgotten): --execute refuses it before anything is written, and
# so does the dry run, alike. Before, the dry run said yes.
kt_sql "$db" "RENAME TABLE ktally_forgotten TO hidden; CREATE VIEW ktally_forgotten AS SELECT * FROM hidden"
before=$(snapshot "$db")
rc=0; forget --execute > /dev/null 2> "$WORK/view" || rc=$?
((rc == 2)) && grep -q "ktally_forgotten is a view over hidden, not a table" "$WORK/view" \
  || { cat "$WORK/view" >&2; fail "forget with a view ktally_forgotten: exit $rc"; }
[[ $(snapshot "$db") == "$before" ]] || fail "a refused forget changed the database"
kt_dry_run_alike "$rc" "$WORK/view" "$KTALLY" forget --db "$db_uri" --job "$job" --execute
