#!/usr/bin/env bash
# The page with --by: a selector of links (?by=FIELD, no script) picks the
# field; the chart stacks its five keys with the most lines in the window
# and the rest as "other" (the (other) row of --max-keys included), with a
# legend; every stacked bar adds up to the table's count for its minute;
# /metrics counts the folded lines. Rendered in headless Chromium, a
# screenshot in build/dashboard-by.png.
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

for cmd in curl chromium; do
  command -v "$cmd" > /dev/null || fail "$cmd not found (scripts/setup installs it)"
done

kt_shape_options access --keys 9
db_uri=$(kt_new_db http_by); db=$(kt_db_name "$db_uri")
topic=$(kt_new_topic http_by 4)
kt_gen "$topic" --shape access --keys 9 --lines 20000 --per-second 25 --seed "$KT_SEED" \
  > "$WORK/gen" || fail "kt-gen failed"
messages=$(sed 's/.*messages=\([0-9]*\).*/\1/' "$WORK/gen")
"$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --interval 0.5 \
  --max-keys 7 "${KT_OPTS[@]}" --http 127.0.0.1:0 2> "$WORK/run.log" &
ktally=$!; KT_CHILDREN+=("$ktally")
port=$(kt_http_port "$WORK/run.log") || { tail -5 "$WORK/run.log" >&2; fail "no --http port logged"; }
base=http://127.0.0.1:$port
scrape() { curl -sf --max-time 5 "$base/metrics" > "$WORK/metrics.txt"; }
metric() { awk -v s="$1" '$1 == s { print $2 }' "$WORK/metrics.txt"; }
records_are() { scrape && [[ $(metric "ktally_records_total{ktally_job=\"$topic\"}") == "$1" ]]; }
kt_wait_for 60 records_are "$messages" || { tail -5 "$WORK/run.log" >&2; fail "records_total never reached $messages"; }
folded=$(kt_sql "$db" "SELECT COALESCE(SUM(log_count), 0) FROM error_log WHERE service = '(other)' AND status = '(other)'")
((folded > 0)) || fail "no line was folded into an (other) row (--max-keys 7, 9 keys and statuses)"
[[ $(metric "ktally_lines_folded_total{ktally_job=\"$topic\"}") == "$folded" ]] \
  || fail "ktally_lines_folded_total is $(metric "ktally_lines_folded_total{ktally_job=\"$topic\"}"), the (other) rows hold $folded"

chrome=(chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run
        --disable-background-networking --disable-component-update --disable-sync
        --window-size=1200,900)
dom() {  # dom URL FILE
  timeout 120 "${chrome[@]}" --user-data-dir="$WORK/chrome-$2" --dump-dom "$1" > "$WORK/$2" \
    2> "$WORK/chrome.log" || { tail -5 "$WORK/chrome.log" >&2; fail "chromium --dump-dom $1 failed"; }
  grep -q '<script' "$WORK/$2" && fail "$1 has a script"
  return 0
}
# The table's counts per minute of the last six hours of log time.
kt_sql "$db" "SELECT DATE_FORMAT(log_time, '%Y-%m-%d %H:%i'), SUM(log_count) FROM error_log
              WHERE log_time > (SELECT MAX(log_time) FROM error_log) - INTERVAL 6 HOUR
              GROUP BY log_time" | LC_ALL=C sort > "$WORK/want"
bars_per_minute() {  # the stacked counts of FILE's chart per minute
  grep -o '<title>[0-9-]* [0-9:]*: [^<]*</title>' "$1" \
    | sed 's/<title>\([0-9-]* [0-9:]*\): .*: \([0-9]*\)<\/title>/\1\t\2/; s/<title>\([0-9-]* [0-9:]*\): \([0-9]*\)<\/title>/\1\t\2/' \
    | awk -F'\t' '{ n[$1] += $2 } END { for (m in n) printf "%s\t%d\n", m, n[m] }' | LC_ALL=C sort
}

for field in service status; do
  dom "$base/?by=$field" "by-$field.html"
  grep -q "<a href=\"/?by=$field\" class=\"on\">by $field</a>" "$WORK/by-$field.html" \
    || fail "?by=$field: the selector does not mark $field"
  grep -q '<a href="/">total</a>' "$WORK/by-$field.html" || fail "?by=$field: no link to the totals"
  bars_per_minute "$WORK/by-$field.html" > "$WORK/got-$field"
  cmp -s "$WORK/got-$field" "$WORK/want" \
    || { diff "$WORK/got-$field" "$WORK/want" | head >&2; fail "?by=$field: the stacks do not add up to the table's minutes"; }
  # The legend: the five keys with the most lines in the window, then other.
  kt_sql "$db" "SELECT \`$field\` FROM error_log WHERE \`$field\` <> '(other)' AND log_time >
                (SELECT MAX(log_time) FROM error_log) - INTERVAL 6 HOUR GROUP BY \`$field\`
                ORDER BY SUM(log_count) DESC, \`$field\` LIMIT 5" \
    | sed 's/^$/(empty)/' > "$WORK/top-$field"
  grep -o '<li><span class="sw s[0-9]"></span>[^<]*</li>' "$WORK/by-$field.html" \
    | sed 's/.*<\/span>\(.*\)<\/li>/\1/' | sed 's/&amp;/\&/g' > "$WORK/legend-$field"
  { cat "$WORK/top-$field"; echo other; } | cmp -s - "$WORK/legend-$field" \
    || { diff "$WORK/legend-$field" "$WORK/top-$field" >&2; fail "?by=$field: the legend is not the top 5 keys and other"; }
  for s in 0 5; do
    grep -q "class=\"bar s$s\"" "$WORK/by-$field.html" || fail "?by=$field: no bar of series $s"
  done
done
# The totals, and anything else asked for: one bar per minute.
for q in "" "?by=nope" "?by=%3Cscript%3E"; do
  dom "$base/$q" totals.html
  grep -q '<p id="by">Chart: <a href="/" class="on">total</a>' "$WORK/totals.html" || fail "/$q: not the totals"
  grep -q 'nope\|%3Cscript\|<script' "$WORK/totals.html" && fail "/$q: the page echoes what was asked"
  [[ $(grep -c 'class="bar"' "$WORK/totals.html") == $(wc -l < "$WORK/want") ]] \
    || fail "/$q: $(grep -c 'class="bar"' "$WORK/totals.html") bars, the table has $(wc -l < "$WORK/want") minutes"
done
timeout 120 "${chrome[@]}" --user-data-dir="$WORK/chrome-shot" --screenshot="$KT_BUILD/dashboard-by.png" \
  "$base/?by=service" > /dev/null 2>> "$WORK/chrome.log" || { tail -5 "$WORK/chrome.log" >&2; fail "chromium --screenshot failed"; }
[[ $(head -c 8 "$KT_BUILD/dashboard-by.png" | od -An -tx1 | tr -d ' ') == 89504e470d0a1a0a ]] \
  || fail "no PNG screenshot at $KT_BUILD/dashboard-by.png"
kill -TERM "$ktally"; wait "$ktally" || fail "ktally did not exit 0 on SIGTERM"
note "$TEST_NAME: ?by=service and ?by=status stack to the table's $(wc -l < "$WORK/want") minutes, $folded folded lines in /metrics; screenshot in $KT_BUILD/dashboard-by.png"
