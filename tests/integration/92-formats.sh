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

expect2() {
  local rc=0
  "$KTALLY" run --brokers "$KT_BROKERS" --topic t --db "$KT_DB_URI_BASE/x" "$@" > /dev/null 2> "$WORK/err" || rc=$?
  [[ $rc == 2 && $(wc -l < "$WORK/err") == 1 ]] && grep -q -- "$1" "$WORK/err" \
    || { cat "$WORK/err" >&2; fail "$*: exit $rc, expected 2 and one line"; }
}
expect2 --pattern '(?<time>x' 
expect2 --pattern '(?<when>\S+) (?<level>\w+)'
expect2 --time-format '%Y-%q'
expect2 --bucket 2m
expect2 --levels 'ERROR,,FATAL'
