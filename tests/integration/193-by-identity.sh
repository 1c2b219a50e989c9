#!/usr/bin/env bash
# A table's dimensions and sums are what its rows mean. A run of the same
# job (or a replay into its table) with another --by or --sum is refused
# with exit 2 and one line naming the setting, the stored and the given
# value; so is a table of another shape that no job recorded (a key column
# the job does not list, a sum it does not add, a column too short or of
# another type), and nothing is written. Fields named like SQL keywords
# and like ktally's columns in another case are columns like any other;
# init-db keeps a table of dimensions as it is.
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

kt_shape_options access --by service
topic=$(kt_new_topic by_identity 2)
kt_gen "$topic" --shape access --by service --lines 3000 --seed "$KT_SEED" \
  --truth "$WORK/truth" > /dev/null || fail "kt-gen failed"
db_uri=$(kt_new_db by_identity); db=$(kt_db_name "$db_uri")
run() { "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --interval 0 \
          --exit-when-idle "$@"; }
without() {  # the options but --by and --sum
  printf '%s\n' "${KT_OPTS[@]}" | grep -v -e '^--by=' -e '^--sum='
}
mapfile -t base < <(without)
run "${KT_OPTS[@]}" 2> "$WORK/first.log" || { tail -3 "$WORK/first.log" >&2; fail "the first run failed"; }
kt_check_groups "$db" "$WORK/truth"
state() { kt_sql "$db" "SHOW TABLES; CHECKSUM TABLE error_log, kafka_offset, ktally_batches, ktally_table"; }
before=$(state)

refused() {  # refused PATTERN ARGS...: exit 2, one line matching PATTERN, nothing written
  local pattern=$1 rc=0; shift
  "$@" > "$WORK/out" 2> "$WORK/err" || rc=$?
  [[ $rc == 2 && $(grep -c . "$WORK/err") == 1 ]] && grep -qF -- "$pattern" "$WORK/err" \
    || { cat "$WORK/err" >&2; fail "$*: exit $rc, expected 2 and one line saying '$pattern'"; }
  [[ $(state) == "$before" ]] || fail "$*: a refused run wrote something"
}
refused "table error_log holds rows of --by 'service' (first written by job $topic), and this run gives 'service,status'" \
  run "${base[@]}" --by service,status --sum bytes
refused "table error_log holds rows of --by 'service' (first written by job $topic), and this run gives (the default)" \
  run "${base[@]}" --sum bytes
refused "table error_log holds rows of --sum 'bytes' (first written by job $topic), and this run gives (the default)" \
  run "${base[@]}" --by service
refused "holds rows of --by 'service'" "$KTALLY" replay --brokers "$KT_BROKERS" --topic "$topic" \
  --db "$db_uri" --from 0:0 --until 0:10 --table error_log "${base[@]}" --by status --sum bytes
# The same fields in another order are the same (--by is a set).
run "${base[@]}" --sum bytes --by service 2> "$WORK/same.log" || { tail -3 "$WORK/same.log" >&2; fail "the same settings were refused"; }
# init-db reads error_log's shape where a job recorded it.
"$KTALLY" init-db --db "$db_uri" 2> "$WORK/init.log" || { cat "$WORK/init.log" >&2; fail "init-db refused a table of dimensions"; }
before=$(state)

# Tables no job recorded, of another shape: refused naming the column.
shape_refused() {  # shape_refused SQL PATTERN ARGS...
  local sql=$1 pattern=$2; shift 2
  kt_sql "$db" "DROP TABLE IF EXISTS hand; DROP VIEW IF EXISTS hand; $sql"
  before=$(state)
  refused "$pattern" run --job "hand$RUN_ID" --table hand "$@"
}
shape_refused "CREATE TABLE hand (log_time DATETIME, host VARBINARY(255), log_count BIGINT, PRIMARY KEY (log_time, host))" \
  "table hand is not the shape ktally writes: column host is in its primary key, and this job's --by does not list it" \
  "${KT_OPTS[@]}"
shape_refused "CREATE TABLE hand (log_time DATETIME, service VARBINARY(20), log_count BIGINT, sum_bytes DECIMAL(38,4), PRIMARY KEY (log_time, service))" \
  "column service is varbinary(20), shorter than VARBINARY(255)" "${KT_OPTS[@]}"
shape_refused "CREATE TABLE hand (log_time DATETIME, service VARCHAR(255), log_count BIGINT, PRIMARY KEY (log_time, service))" \
  "column service is varchar, not varbinary" "${KT_OPTS[@]}"
shape_refused "CREATE TABLE hand (log_time DATETIME, service VARBINARY(255), log_count BIGINT, sum_bytes DECIMAL(20,4), PRIMARY KEY (log_time, service))" \
  "column sum_bytes is decimal(20,4), not DECIMAL(38,4)" "${KT_OPTS[@]}"
shape_refused "CREATE TABLE hand (log_time DATETIME, service VARBINARY(255), log_count BIGINT, sum_bytes DECIMAL(38,4), sum_other DECIMAL(38,4), PRIMARY KEY (log_time, service))" \
  "column sum_other is a sum, and this job's --sum does not list it" "${KT_OPTS[@]}"
shape_refused "CREATE TABLE hand (log_time DATETIME PRIMARY KEY, log_count BIGINT)" \
  "column service is missing" "${KT_OPTS[@]}"
shape_refused "CREATE TABLE hand (log_time DATETIME, service VARBINARY(255), log_count BIGINT, PRIMARY KEY (log_time))" \
  "column service is not in its primary key" "${base[@]}" --by service
shape_refused "CREATE VIEW hand AS SELECT 1 AS x" "hand is a view, not a table" "${KT_OPTS[@]}"
# Idempotent mode writes NAME_topic and a view NAME: a table NAME is
# not one, nor a view of other columns.
idb_uri=$(kt_new_db by_identity_idem); idb=$(kt_db_name "$idb_uri")
irun() { "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$idb_uri" --mode idempotent \
           --interval 0 --exit-when-idle --table hand "$@"; }
kt_sql "$idb" "CREATE TABLE hand (log_time DATETIME PRIMARY KEY, log_count BIGINT)"
rc=0; irun "${KT_OPTS[@]}" 2> "$WORK/err" || rc=$?
[[ $rc == 2 ]] && grep -qF "hand is a table: idempotent mode writes hand_topic and a view hand over it" "$WORK/err" \
  || { cat "$WORK/err" >&2; fail "idempotent --table over a base table: exit $rc"; }
kt_sql "$idb" "DROP TABLE hand; CREATE VIEW hand AS SELECT NOW() AS log_time, 'x' AS host, 1 AS log_count"
rc=0; irun "${KT_OPTS[@]}" 2> "$WORK/err" || rc=$?
[[ $rc == 2 ]] && grep -qF "table hand is not the shape ktally writes: column host is a column of this view" "$WORK/err" \
  || { cat "$WORK/err" >&2; fail "idempotent --table over a view of other columns: exit $rc"; }

# Fields named like SQL keywords, and like ktally's columns in no clash:
# quoted columns, both modes, exact.
pattern='^(?<time>\S+ \S+) (?<level>[A-Z]+) (?<select>\S*) (?<Order>\S*) (?<from>\S*)$'
ktopic=$(kt_new_topic by_keywords 2)
printf '%s\n' "2017-07-30 14:09:08 ERROR a b 1.5" "2017-07-30 14:09:09 ERROR a b 2" \
  "2017-07-30 14:09:10 ERROR a c 0.0001" "2017-07-30 14:09:11 INFO a c 5" > "$WORK/kw.log"
kcat -b "$KT_BROKERS" -P -t "$ktopic" -l "$WORK/kw.log" || fail "kcat failed"
printf '2017-07-30 14:09:00\ta\tb\t2\t3.5000\n2017-07-30 14:09:00\ta\tc\t1\t0.0001\n' > "$WORK/kw.truth"
for mode in transactional idempotent; do
  kdb_uri=$(kt_new_db "by_kw_$mode"); kdb=$(kt_db_name "$kdb_uri")
  "$KTALLY" run --brokers "$KT_BROKERS" --topic "$ktopic" --db "$kdb_uri" --mode "$mode" --interval 0 \
    --exit-when-idle --table "group" --pattern "$pattern" --by select,Order --sum from 2> "$WORK/kw.log" \
    || { tail -3 "$WORK/kw.log" >&2; fail "$mode: fields named like keywords"; }
  kt_sql "$kdb" 'SELECT log_time, `select`, `order`, log_count, sum_from FROM `group`' | LC_ALL=C sort > "$WORK/kw.got"
  cmp -s "$WORK/kw.got" "$WORK/kw.truth" || { diff "$WORK/kw.got" "$WORK/kw.truth" >&2; fail "$mode: keyword fields not exact"; }
done
note "$TEST_NAME: changed --by and --sum refused, 8 tables of another shape refused, SQL keywords as fields exact in both modes"
