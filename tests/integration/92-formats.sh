#!/usr/bin/env bash
# Any log format: each samples/formats/NAME.conf ([parse] pattern,
# time-format, levels, bucket) on its NAME.log gives NAME.expected, exactly;
# and bad format options are one-line errors.
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

formats=$KT_SRC/samples/formats
# syslog lines have no year: the expected year of each follows ktally's
# rule, the latest of next, this and last year (UTC) that puts the line at
# most a day after now.
with_years() {  # with_years FILE: each "YEAR-MM-DD HH:MM:SS<TAB>n" with its year
  local now y t s line
  now=$(date -u +%s) y=$(date -u +%Y)
  while IFS= read -r line; do
    [[ $line == YEAR* ]] || { echo "$line"; continue; }
    for t in $((y + 1)) "$y" $((y - 1)); do
      s=$(date -u -d "$t${line:4:15}" +%s 2> /dev/null) || continue
      ((s <= now + 86400)) && { echo "$t${line:4}"; break; }
    done
  done < "$1"
}
for name in iso8601 syslog custom; do
  db_uri=$(kt_new_db "fmt_$name"); db=$(kt_db_name "$db_uri")
  topic=$(kt_new_topic "fmt_$name" 2)
  kcat -b "$KT_BROKERS" -P -t "$topic" -l -X sticky.partitioning.linger.ms=0 "$formats/$name.log"
  "$KTALLY" run --config "$formats/$name.conf" --brokers "$KT_BROKERS" --topic "$topic" \
    --db "$db_uri" --interval 0 --exit-when-idle --log-format json 2> "$WORK/$name.log" \
    || { cat "$WORK/$name.log" >&2; fail "$name: run failed"; }
  with_years "$formats/$name.expected" > "$WORK/$name.expected"
  kt_check_counts "$db" "$WORK/$name.expected"
  malformed=$(kt_log_sum batch malformed "$WORK/$name.log")
  note "$TEST_NAME: $name: exact, $malformed malformed lines reported"
done

# Bad format options: run refuses them at start, and config --check the
# same way (before, config --check passed them all).
expect2() {
  local rc=0 crc=0
  "$KTALLY" run --brokers "$KT_BROKERS" --topic t --db "$KT_DB_URI_BASE/x" "$@" > /dev/null 2> "$WORK/err" || rc=$?
  [[ $rc == 2 && $(wc -l < "$WORK/err") == 1 ]] && grep -q -- "$1" "$WORK/err" \
    || { cat "$WORK/err" >&2; fail "$*: exit $rc, expected 2 and one line"; }
  "$KTALLY" config --check --brokers "$KT_BROKERS" --topic t --db "$KT_DB_URI_BASE/x" "$@" > /dev/null \
    2> "$WORK/cerr" || crc=$?
  [[ $crc == 2 && $(sed 's/ (try .*//' "$WORK/cerr") == $(sed 's/ (try .*//' "$WORK/err") ]] \
    || { cat "$WORK/cerr" >&2; fail "config --check $*: exit $crc, not as run refuses it"; }
}
expect2 --pattern '(?<time>x' 
expect2 --pattern '(?<when>\S+) (?<level>\w+)'
expect2 --time-format '%Y-%q'
expect2 --bucket 2m
expect2 --levels 'ERROR,,FATAL'
# Time formats that cannot place a line in time (issue #26 item 4):
# before, '%H:%M:%S' counted every line into 1970-01-01 and 'ISO8601' (no
# conversion) made every line malformed.
expect2 --time-format ISO8601
expect2 --time-format '%H:%M:%S'
expect2 --time-format '%Y-%m-%d'
expect2 --time-format 'today'

# The syslog shape as a format of its own has no year either: the syslog
# rule dates it, as the preset (before: every line in 1970).
db_uri=$(kt_new_db fmt_syslog_shape); db=$(kt_db_name "$db_uri")
topic=$(kt_new_topic fmt_syslog_shape 1)
kcat -b "$KT_BROKERS" -P -t "$topic" -l "$formats/syslog.log"
"$KTALLY" run --config "$formats/syslog.conf" --time-format '%b %e %H:%M:%S' --brokers "$KT_BROKERS" \
  --topic "$topic" --db "$db_uri" --interval 0 --exit-when-idle 2> "$WORK/shape.log" \
  || { cat "$WORK/shape.log" >&2; fail "syslog shape: run failed"; }
with_years "$formats/syslog.expected" > "$WORK/shape.expected"
kt_check_counts "$db" "$WORK/shape.expected"
note "$TEST_NAME: '%b %e %H:%M:%S' dated as syslog; 9 bad format options refused by run and config --check"
