#!/usr/bin/env bash
# broker: any - nothing here is Kafka-specific; the mock is quicker.
#
# A job's settings are compared by what they mean, not how they are
# spelled: --levels ERROR,ERROR and ERROR are one set of levels, and
# --time-format '%F %T' reads exactly what the default
# '%Y-%m-%d %H:%M:%S' reads. Both were refused as changes of the job's
# settings (exit 2, "holds rows of --levels 'ERROR'") before they were
# stored and compared in a normal form; a change of meaning is still
# refused. Red before: the second and third runs below exited 2.
source "$(dirname "$0")/lib.sh"

db_uri=$(kt_new_db normal); db=$(kt_db_name "$db_uri")
topic=$(kt_new_topic normal 2)
kt_gen "$topic" --lines 2000 --partitions 2 --seed 197 --truth "$WORK/truth" > /dev/null || fail "kt-gen failed"
run() { "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --interval 0 \
          --exit-when-idle "$@"; }
run 2> "$WORK/first.log" || { tail -3 "$WORK/first.log" >&2; fail "the first run failed"; }
kt_check_counts "$db" "$WORK/truth"

kt_gen "$topic" --lines 1000 --partitions 2 --seed 198 --start "2019-01-01 00:00:00" \
  --truth "$WORK/truth2" > /dev/null || fail "kt-gen failed"
run --levels ERROR,ERROR 2> "$WORK/levels.log" \
  || { tail -3 "$WORK/levels.log" >&2; fail "--levels ERROR,ERROR refused as a change of ERROR"; }
kt_gen "$topic" --lines 1000 --partitions 2 --seed 199 --start "2020-01-01 00:00:00" \
  --truth "$WORK/truth3" > /dev/null || fail "kt-gen failed"
run --time-format '%F %T' 2> "$WORK/format.log" \
  || { tail -3 "$WORK/format.log" >&2; fail "--time-format '%F %T' refused as a change of the default"; }
kt_sum_truths "$WORK/truth" "$WORK/truth2" "$WORK/truth3" > "$WORK/all"
kt_check_counts "$db" "$WORK/all"

# What the database recorded is the normal form: the default format is ''.
[[ $(kt_sql "$db" "SELECT CONCAT(levels, '|', time_format) FROM ktally_table WHERE name = 'error_log'") == "ERROR|" ]] \
  || fail "ktally_table holds $(kt_sql "$db" "SELECT CONCAT(levels, '|', time_format) FROM ktally_table")"

# A change of meaning is still refused, spelled any way.
refused() {
  local rc=0
  run "$@" 2> "$WORK/err" || rc=$?
  [[ $rc == 2 ]] && grep -q "holds rows of" "$WORK/err" \
    || { cat "$WORK/err" >&2; fail "$*: exit $rc, expected a refusal"; }
}
refused --levels ERROR,FATAL,ERROR
refused --time-format '%F %H:%M'
kt_audit "$db_uri"
note "$TEST_NAME: --levels ERROR,ERROR and --time-format '%F %T' are the job's settings; changes refused"
