#!/usr/bin/env bash
# broker: any - nothing here is Kafka-specific; the mock is quicker.
#
# A job's settings are compared by what they mean, not how they are
# spelled: --levels ERROR,ERROR and ERROR are one set of levels, and
# --time-format '%F %T' reads exactly what the default
# '%Y-%m-%d %H:%M:%S' reads. Both were refused as changes of the job's
# settings (exit 2, "holds rows of --levels 'ERROR'") before they were
# stored and compared in a normal form; a change of meaning is still
# refused. Red before: the second and third runs below exited 2. The
# same for --input (text spelled out) and field paths (a needless
# backslash; an escaped dot is another path).
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
# --input text spelled out is the default; another input is another job.
run --input text 2> "$WORK/input.log" \
  || { tail -3 "$WORK/input.log" >&2; fail "--input text refused as a change of the default"; }
refused --input json
kt_audit "$db_uri"

# Field paths: a backslash that changes nothing is the same path; one that
# makes a dot part of a name is another (one member, not a member's).
db2_uri=$(kt_new_db normal_paths); db2=$(kt_db_name "$db2_uri")
jtopic=$(kt_new_topic normal_paths 2)
kt_shape_options ecs --by service.name,level
kt_gen "$jtopic" --shape ecs --lines 600 --partitions 2 --seed 197 --truth "$WORK/jtruth" > /dev/null \
  || fail "kt-gen failed"
jrun() { "$KTALLY" run --brokers "$KT_BROKERS" --topic "$jtopic" --db "$db2_uri" --interval 0 \
           --exit-when-idle "$@"; }
jrun "${KT_OPTS[@]}" 2> "$WORK/j1.log" || { tail -3 "$WORK/j1.log" >&2; fail "the json run failed"; }
kt_check_groups "$db2" "$WORK/jtruth"
without_by=()
for o in "${KT_OPTS[@]}"; do [[ $o == --by=* ]] || without_by+=("$o"); done
jrun "${without_by[@]}" --by 'level,serv\ice.\name' 2> "$WORK/j2.log" \
  || { tail -3 "$WORK/j2.log" >&2; fail "--by 'level,serv\ice.\name' refused as a change of service.name,level"; }
[[ $(kt_sql "$db2" "SELECT CONCAT(input, '|', dimensions) FROM ktally_table WHERE name = 'error_log'") \
     == "json|level,service.name" ]] \
  || fail "ktally_table holds $(kt_sql "$db2" "SELECT CONCAT(input, '|', dimensions) FROM ktally_table")"
rc=0
jrun "${without_by[@]}" --by 'service\.name,level' 2> "$WORK/err" || rc=$?
[[ $rc == 2 ]] && grep -q "holds rows of --by" "$WORK/err" \
  || { cat "$WORK/err" >&2; fail "--by 'service\.name': exit $rc, expected a refusal"; }
rc=0
jrun "${KT_OPTS[@]}" --time-field @timestamp 2> "$WORK/err" || rc=$?
[[ $rc == 2 ]] && grep -q "holds rows of --time-field" "$WORK/err" \
  || { cat "$WORK/err" >&2; fail "--time-field @timestamp: exit $rc, expected a refusal (the defaults are a list)"; }
kt_audit "$db2_uri"
note "$TEST_NAME: --levels ERROR,ERROR, --time-format '%F %T', --input text and a path spelled two ways are the job's settings; changes refused"
