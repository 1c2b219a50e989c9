#!/usr/bin/env bash
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
# Every object ktally writes is what ktally writes there, or the run is
# refused with exit 2 and one line naming it and what it is, and nothing is
# created (issue #26 item 1). An idempotent job with --table foo_topic
# makes a view foo_topic over foo_topic_topic; a second idempotent job with
# --table foo then made a view foo over that view, exited 0 and showed the
# first job's counts as its own, and its first write failed (exit 3, "not
# insertable-into"); the same with --table error_log_topic and then the
# default table. Red before: the second jobs were not refused, nor were a
# view or a sequence in place of a count table, of idempotent mode's
# table under its view, or of one of ktally's own tables, nor a view named
# like the job's over something else, nor --table naming one of ktally's
# own tables. Broker: the mock (scripts/services); the refusals come
# before any record is read, and one job commits a batch first.
source "$(dirname "$0")/lib.sh"

topic=$(kt_new_topic view_table 2)
other=$(kt_new_topic view_table_other 1)  # for the jobs after the first: none shares its topic
kt_gen "$topic" --lines 200 --seed 146 > /dev/null || fail "kt-gen failed"
db_uri=$(kt_new_db view_table); db=$(kt_db_name "$db_uri")
run() {  # run JOB ARGS...: a job over $on (default $other)
  local job=$1; shift
  "$KTALLY" run --brokers "$KT_BROKERS" --topic "${on:-$other}" --db "$db_uri" --interval 0 \
    --exit-when-idle --job "$job$RUN_ID" "$@"
}
state() { kt_sql "$db" "SHOW FULL TABLES" | LC_ALL=C sort; }
refused() {  # refused PATTERN COMMAND...: exit 2, one line matching PATTERN, nothing created
  local pattern=$1 rc=0 before; shift
  before=$(state)
  "$@" > "$WORK/out" 2> "$WORK/err" || rc=$?
  [[ $rc == 2 && $(grep -c . "$WORK/err") == 1 ]] && grep -qF -- "$pattern" "$WORK/err" \
    || { cat "$WORK/err" >&2; fail "$*: exit $rc, expected 2 and one line saying '$pattern'"; }
  [[ $(state) == "$before" ]] || { diff <(echo "$before") <(state) >&2; fail "$*: a refused run created something"; }
}

# An idempotent job's view where another idempotent job's table must be.
on=$topic run first --mode idempotent --table foo_topic 2> "$WORK/first.log" \
  || { tail -3 "$WORK/first.log" >&2; fail "the first idempotent job failed"; }
refused "foo_topic is a view over foo_topic_topic, not a table: idempotent mode writes foo_topic and a view foo over it" \
  run second --mode idempotent --table foo
# ... where a transactional job's table must be.
refused "foo_topic is a view over foo_topic_topic, not a table" run third --table foo_topic
# A view named like the job's over something else: another job's table, or
# a table of another program's.
kt_sql "$db" "CREATE VIEW mine AS SELECT log_time, CAST(SUM(log_count) AS SIGNED) AS log_count
              FROM foo_topic_topic GROUP BY log_time;
              CREATE TABLE theirs (log_time DATETIME PRIMARY KEY, log_count BIGINT);
              CREATE VIEW yours AS SELECT log_time, log_count FROM theirs;
              CREATE SEQUENCE seq"
refused "mine is a view over foo_topic_topic, not ktally's view over mine_topic" \
  run fourth --mode idempotent --table mine
refused "yours is a view over theirs, not ktally's view over yours_topic" \
  run fourth --mode idempotent --table yours
refused "yours is a view over theirs, not a table" run fourth --table yours
refused "seq is a sequence, not a table" run fourth --table seq
refused "seq is a sequence, not a view" run fourth --mode idempotent --table seq
# ktally's own tables are no count tables, whatever the mode.
for table in kafka_offset ktally_coverage account_balance error_log_topic; do
  for mode in transactional idempotent; do
    refused "$table is the name of one of ktally's own tables, not of a count table" \
      run fifth --mode "$mode" --table "$table"
  done
done

# The issue's case, as an older ktally left it: an idempotent job with
# --table error_log_topic (refused now, above) made the view
# error_log_topic; the default idempotent job is refused.
idb_uri=$(kt_new_db view_table_default); idb=$(kt_db_name "$idb_uri")
"$KTALLY" init-db --db "$idb_uri" --mode idempotent 2> /dev/null || fail "init-db failed"
kt_sql "$idb" "DROP VIEW error_log; DROP TABLE error_log_topic;
               CREATE TABLE error_log_topic_topic (
                 job VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
                 topic VARCHAR(249) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
                 log_time DATETIME NOT NULL, log_count BIGINT NOT NULL,
                 PRIMARY KEY (job, topic, log_time), KEY by_time (log_time));
               CREATE VIEW error_log_topic AS SELECT log_time, CAST(SUM(log_count) AS SIGNED)
                 AS log_count FROM error_log_topic_topic GROUP BY log_time"
db=$idb db_uri=$idb_uri
refused "error_log_topic is a view over error_log_topic_topic, not a table: idempotent mode writes error_log_topic and a view error_log over it" \
  run default --mode idempotent
refused "error_log_topic is a view over error_log_topic_topic, not a table" \
  "$KTALLY" init-db --db "$idb_uri" --mode idempotent
# The older job itself goes on: its table and view are ktally's.
on=$topic run older --mode idempotent --table error_log_topic 2> "$WORK/older.log" \
  || { tail -3 "$WORK/older.log" >&2; fail "the older job over error_log_topic was refused"; }
[[ $(kt_sql "$idb" "SELECT SUM(log_count) FROM error_log_topic") -gt 0 ]] \
  || fail "the older job counted nothing into error_log_topic"

# A view in place of one of ktally's own tables, in a fresh database:
# refused before the schema is made.
for table in ktally_batches account_balance ktally_coverage; do
  vdb_uri=$(kt_new_db "view_table_$table"); db=$(kt_db_name "$vdb_uri") db_uri=$vdb_uri
  kt_sql "$db" "CREATE TABLE hand (x INT); CREATE VIEW $table AS SELECT x FROM hand"
  refused "$table is a view over hand, not a table: ktally writes a table of its own by that name" \
    "$KTALLY" init-db --db "$vdb_uri" --mode idempotent
  refused "$table is a view over hand, not a table" run sixth --kind ledger
done

note "$TEST_NAME: views, sequences and ktally's own names where a job writes refused, nothing created; an older job over error_log_topic goes on"
