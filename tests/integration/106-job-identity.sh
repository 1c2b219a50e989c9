#!/usr/bin/env bash
# A job is its settings, and a table is what its rows mean. Each of these
# was accepted with exit 0 and a clean audit before (issues #11.8, #17.1-3),
# and is now refused with exit 2 and one line naming the setting, nothing
# written:
#  - --bucket, --levels, --pattern, --time-format changed between runs of
#    one job (a 1m table got one 1h row that merged an hour for good);
#  - --kind ledger resuming a count job's offsets, and a --group member of
#    another kind; --mode idempotent on a transactional job;
#  - a second job over the same topic into the same table (counted twice),
#    unless --share-table; then audit reports the range counted twice;
#  - a replay into a table with another bucket;
#  - tables of another shape: error_log with a DATE minute, a
#    ktally_batches without member, replay --table kafka_offset.
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

db_uri=$(kt_new_db identity); db=$(kt_db_name "$db_uri")
topic=$(kt_new_topic identity 2)
kt_gen "$topic" --lines 2000 --partitions 2 --seed 106 --truth "$WORK/truth" > /dev/null || fail "kt-gen failed"
run() { "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --interval 0 \
          --exit-when-idle "$@"; }
run 2> "$WORK/first.log" || { tail -3 "$WORK/first.log" >&2; fail "the first run failed"; }
kt_gen "$topic" --lines 1000 --partitions 2 --seed 107 --start "2019-01-01 00:00:00" > /dev/null
state() { kt_sql "$db" "CHECKSUM TABLE error_log, kafka_offset, ktally_batches"; }
before=$(state)

refused() {  # refused PATTERN ARGS...: exit 2, one line matching PATTERN, nothing written
  local pattern=$1 rc=0; shift
  "$@" > "$WORK/out" 2> "$WORK/err" || rc=$?
  [[ $rc == 2 && $(grep -c . "$WORK/err") == 1 ]] && grep -q -- "$pattern" "$WORK/err" \
    || { cat "$WORK/err" >&2; fail "$*: exit $rc, expected 2 and one line saying '$pattern'"; }
  [[ $(state) == "$before" ]] || fail "$*: a refused run wrote something"
}
refused "job $topic was created with --kind 'count', and this run gives 'ledger'" run --kind ledger
refused "created with --kind 'count'" run --kind ledger --group "g$RUN_ID"
refused "table error_log holds rows of --bucket '1m' (first written by job $topic), and this run gives '1h'" run --bucket 1h
refused "table error_log holds rows of --levels 'ERROR'" run --levels ERROR,FATAL
refused "table error_log holds rows of --pattern (the default)" \
  run --pattern '^(?<time>\S+ \S+) (?<level>[A-Z]+)'
refused "holds rows of --time-format (the default) (first written by job $topic), and this run gives '%Y-%m-%d %H:%M'" run --time-format '%Y-%m-%d %H:%M'
refused "idempotent" run --mode idempotent
refused "job $topic already counts topic $topic into table error_log" run --job "other$RUN_ID"
refused "holds rows of --bucket '1m'" "$KTALLY" replay --brokers "$KT_BROKERS" --topic "$topic" \
  --db "$db_uri" --from 0:0 --until 0:10 --table error_log --bucket 5m
# The same settings spelled otherwise are the same job.
run --levels ERROR --time-format '%Y-%m-%d %H:%M:%S' 2> "$WORK/same.log" || { tail -3 "$WORK/same.log" >&2; fail "the same settings were refused"; }
before=$(state)

# A job that holds offsets but has counted nothing yet is a job too: a
# second one over its topic is refused (found by the history checker).
etopic=$(kt_new_topic identity_empty 2)
"$KTALLY" run --brokers "$KT_BROKERS" --topic "$etopic" --db "$db_uri" --interval 0 --exit-when-idle \
  2> /dev/null || fail "a run over an empty topic failed"
before=$(state)
refused "job $etopic already counts topic $etopic into table error_log" \
  "$KTALLY" run --brokers "$KT_BROKERS" --topic "$etopic" --db "$db_uri" --job "late$RUN_ID" --exit-when-idle

# Sharing on purpose: counted twice, and audit says so.
run --job "other$RUN_ID" --share-table 2> "$WORK/share.log" || fail "--share-table was refused"
rc=0; "$KTALLY" audit --db "$db_uri" > "$WORK/audit.out" 2>&1 || rc=$?
[[ $rc == 5 ]] && grep -q "error_log: offsets \[0, [0-9]*) of $topic/[01] were counted into it by two jobs, $topic and other$RUN_ID" "$WORK/audit.out" \
  || { cat "$WORK/audit.out" >&2; fail "audit does not report the range counted by two jobs (exit $rc)"; }

# Tables of another shape, whoever made them.
sdb_uri=$(kt_new_db identity_shape); sdb=$(kt_db_name "$sdb_uri")
kt_sql "$sdb" "CREATE TABLE error_log (log_time DATE PRIMARY KEY, log_count BIGINT)"
before_shape() { kt_sql "$sdb" "SHOW TABLES" | tr '\n' ' '; }
for cmd in "init-db --db $sdb_uri" "run --brokers $KT_BROKERS --topic $topic --db $sdb_uri --exit-when-idle"; do
  rc=0; "$KTALLY" $cmd > /dev/null 2> "$WORK/err" || rc=$?
  [[ $rc == 2 && $(grep -c . "$WORK/err") == 1 ]] && grep -q "table error_log is not the shape ktally writes: column log_time is date, not datetime" "$WORK/err" \
    || { cat "$WORK/err" >&2; fail "$cmd on a DATE error_log: exit $rc"; }
done
[[ $(kt_sql "$sdb" "SELECT COUNT(*) FROM error_log") == 0 ]] || fail "a run wrote into a DATE error_log"
bdb_uri=$(kt_new_db identity_batches); bdb=$(kt_db_name "$bdb_uri")
"$KTALLY" init-db --db "$bdb_uri" 2> /dev/null || fail "init-db failed"
kt_sql "$bdb" "ALTER TABLE ktally_batches DROP COLUMN member"
rc=0; "$KTALLY" init-db --db "$bdb_uri" 2> "$WORK/err" || rc=$?
[[ $rc == 2 ]] && grep -q "table ktally_batches is not the shape ktally writes: column member is missing" "$WORK/err" \
  || { cat "$WORK/err" >&2; fail "init-db with a ktally_batches without member: exit $rc"; }
rc=0; "$KTALLY" replay --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --from 0:0 --until 0:10 \
  --table kafka_offset 2> "$WORK/err" || rc=$?
[[ $rc == 2 ]] && grep -q "kafka_offset is the name of one of ktally's own tables, not of a count table" "$WORK/err" \
  || { cat "$WORK/err" >&2; fail "replay --table kafka_offset: exit $rc"; }
note "$TEST_NAME: 9 changed settings refused, the same spelled otherwise accepted, --share-table audited, 3 tables of another shape refused"
