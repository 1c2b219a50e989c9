#!/usr/bin/env bash
# run --http: /metrics passes promtool and its counts equal what was
# produced; /healthz is 200 while batches succeed (idle ones too) and 503,
# with the reason, while MySQL is down, then 200 again; unknown paths 404,
# POST 405; a slowloris client is cut by the request deadline while
# /metrics keeps answering; a huge header gets 431; a crowd of connections
# from one address loses its oldest past the per-IP limit while batches go
# on committing (131-http-slow-clients has the rest of the limits); the
# page at / has the lag table and the SVG chart of error_log (a screenshot
# goes to build/dashboard.png); a port in use is a usage error.
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

for cmd in curl promtool chromium; do
  command -v "$cmd" > /dev/null || fail "$cmd not found (scripts/setup installs it)"
done

# MySQL is killed mid-test: whatever happens, the next test gets it back.
mysql_down=no
restore_mysql() {
  if [[ $mysql_down == yes ]]; then "$KT_SERVICES" restart-mysql > /dev/null || true; fi
}
trap 'restore_mysql; kt_cleanup' EXIT

port_busy() { (exec 3<> "/dev/tcp/127.0.0.1/$1") 2> /dev/null; }

db_uri=$(kt_new_db http); db=$(kt_db_name "$db_uri")
topic=$(kt_new_topic http 4)
summary() { sed "s/.*$1=\([0-9]*\).*/\1/" "$2"; }

kt_gen "$topic" --lines 20000 --seed 86 --truth "$WORK/t1" > "$WORK/gen1"
"$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --interval 1 \
  --http 127.0.0.1:0 2> "$WORK/run.log" &
ktally=$!; KT_CHILDREN+=("$ktally")
port=$(kt_http_port "$WORK/run.log") || { tail -5 "$WORK/run.log" >&2; fail "no --http port logged"; }
base=http://127.0.0.1:$port

scrape() { curl -sf --max-time 5 "$base/metrics" > "$WORK/metrics.txt"; }
metric() { awk -v s="$1" '$1 == s { print $2 }' "$WORK/metrics.txt"; }
records_are() { scrape && [[ $(metric "ktally_records_total{ktally_job=\"$topic\"}") == "$1" ]]; }
status_of() { curl -s -o "$WORK/body" -w '%{http_code}' --max-time 10 "$@"; }

messages=$(summary messages "$WORK/gen1")
kt_wait_for 60 records_are "$messages" \
  || { tail -5 "$WORK/run.log" >&2; fail "records_total never reached $messages"; }
kt_check_counts "$db" "$WORK/t1"

# /metrics: valid exposition, and the counts are the generator's.
promtool check metrics < "$WORK/metrics.txt" > "$WORK/promtool.out" 2>&1 \
  || { cat "$WORK/promtool.out" >&2; fail "promtool check metrics failed"; }
[[ $(metric "ktally_lines_total{ktally_job=\"$topic\",kind=\"error\"}") == $(summary errors "$WORK/gen1") ]] \
  || fail "lines_total{kind=error} is not the generator's error count"
[[ $(metric "ktally_lines_total{ktally_job=\"$topic\",kind=\"malformed\"}") == $(summary malformed "$WORK/gen1") ]] \
  || fail "lines_total{kind=malformed} is not the generator's malformed count"
[[ $(metric "ktally_lines_total{ktally_job=\"$topic\",kind=\"other\"}") == $(summary other "$WORK/gen1") ]] \
  || fail "lines_total{kind=other} is not the generator's other count"
offsets=$(awk -v t="$topic" 'index($1, "ktally_partition_offset{ktally_job=\"" t "\"") == 1 { s += $2; n++ }
                             END { print n "/" s }' "$WORK/metrics.txt")
[[ $offsets == "4/$messages" ]] || fail "partition_offset: $offsets, expected 4 partitions adding up to $messages"
[[ $(awk 'index($1, "ktally_partition_lag{") == 1 { s += $2 } END { print s + 0 }' "$WORK/metrics.txt") == 0 ]] \
  || fail "lag is not 0 after everything was committed"
committed_at=$(metric "ktally_last_commit_timestamp_seconds{ktally_job=\"$topic\"}")
awk -v t="$committed_at" -v now="$(date +%s)" 'BEGIN { exit !(t > now - 120 && t <= now + 1) }' \
  || fail "last_commit_timestamp_seconds $committed_at is not recent"
grep -q '^ktally_batch_duration_seconds_bucket{ktally_job="'"$topic"'",le="+Inf"} [1-9]' "$WORK/metrics.txt" \
  || fail "the duration histogram has no observation"

[[ $(status_of "$base/healthz") == 200 ]] || fail "/healthz: not 200 after a commit: $(cat "$WORK/body")"
[[ $(status_of "$base/nope") == 404 ]] || fail "an unknown path is not 404"
[[ $(status_of -X POST -d x=1 "$base/metrics") == 405 ]] || fail "POST is not 405"
curl -s -D - -o /dev/null -X DELETE "$base/" | grep -qi '^Allow: GET, HEAD' || fail "405 without Allow"
[[ $(curl -s -I --max-time 5 "$base/" | head -1 | tr -d '\r') == "HTTP/1.1 200 OK" ]] || fail "HEAD / is not 200"
big=$(head -c 40000 /dev/zero | tr '\0' a)
code=$(status_of -H "X-Big: $big" "$base/metrics")
[[ $code == 431 || $code == 413 ]] || fail "a 40 kB header got $code, not 431"
[[ $(status_of "$base/metrics") == 200 ]] || fail "/metrics does not answer after a huge header"

# Slowloris: a header trickled every second never ends; the request
# deadline (10 s) cuts it although the idle timeout never fires, and
# /metrics answers at once meanwhile. No new data: the service is idle
# all along, which is healthy (the last batch succeeded).
exec {slow}<> "/dev/tcp/127.0.0.1/$port"
printf 'GET /metrics HTTP/1.1\r\nHost: x\r\n' >&"$slow"
( for ((i = 0; i < 40; i++)); do sleep 1; printf 'X-Slow-%d: y\r\n' "$i" >&"$slow" || exit 0; done ) 2> /dev/null &
trickler=$!; KT_CHILDREN+=("$trickler")
slow_start=$SECONDS
for ((i = 0; i < 3; i++)); do
  [[ $(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$base/metrics") == 200 ]] \
    || fail "/metrics does not answer while a slowloris client is connected"
  sleep 1
done
if read -r -t 30 -u "$slow" line; then fail "the slowloris client got an answer: $line"; fi
((SECONDS - slow_start <= 20)) || fail "the slowloris client was not cut within 20 s"
exec {slow}>&-
kill "$trickler" 2> /dev/null || true
note "$TEST_NAME: slowloris cut after $((SECONDS - slow_start)) s"
awk -v t="$committed_at" -v now="$(date +%s.%N)" 'BEGIN { exit !(now - t > 10) }' \
  || fail "the test did not stay idle for longer than the health window"
[[ $(status_of "$base/healthz") == 200 ]] || fail "/healthz: an idle service is not healthy: $(cat "$WORK/body")"
grep -q '(idle)' "$WORK/body" || fail "/healthz does not say the last batch was idle: $(cat "$WORK/body")"

# A crowd from one address: past the per-IP limit (8) the oldest are cut
# to make room; the batch loop does not notice; the server recovers.
crowd=()
for ((i = 0; i < 12; i++)); do exec {fd}<> "/dev/tcp/127.0.0.1/$port"; crowd+=("$fd"); done
refused=0
for fd in "${crowd[@]}"; do
  if read -r -t 1 -u "$fd" _; then :; elif (($? <= 128)); then refused=$((refused + 1)); fi
done
((refused >= 4)) || fail "only $refused of 12 connections from one address were refused (limit 8)"
kt_gen "$topic" --lines 5000 --seed 87 --truth "$WORK/t2" > "$WORK/gen2"
messages=$((messages + $(summary messages "$WORK/gen2")))
offsets_are() { [[ $(kt_offset_sum "$db" "$topic") == "$1" ]]; }
kt_wait_for 30 offsets_are "$messages" || fail "batches stalled while the HTTP side was crowded"
for fd in "${crowd[@]}"; do exec {fd}>&-; done
kt_wait_for 10 records_are "$messages" || fail "/metrics does not recover after the crowd left"

# MySQL down: batches fail, /healthz turns 503 with the reason once no
# batch has succeeded for 3 intervals (10 s at least), the page still
# renders without its chart; MySQL back: 200 again, counts exact.
"$KT_SERVICES" kill-mysql > /dev/null; mysql_down=yes
unhealthy() { [[ $(status_of "$base/healthz") == 503 ]]; }
kt_wait_for 60 unhealthy || fail "/healthz stayed $(status_of "$base/healthz") with MySQL down"
grep -q 'no batch has succeeded for' "$WORK/body" && grep -q 'failed' "$WORK/body" \
  || fail "/healthz 503 without the reason: $(cat "$WORK/body")"
note "$TEST_NAME: 503: $(cat "$WORK/body")"
[[ $(status_of "$base/") == 200 ]] || fail "/ is not 200 with MySQL down"
grep -q 'id="chart-error"' "$WORK/body" || fail "/ does not say why the chart is missing"
scrape
[[ $(metric "ktally_batches_total{ktally_job=\"$topic\",result=\"failed\"}") -gt 0 ]] || fail "no failed batch counted"
[[ $(metric "ktally_retries_total{ktally_job=\"$topic\",cause=\"mysql\"}") -gt 0 ]] || fail "no mysql retry counted"
"$KT_SERVICES" restart-mysql > /dev/null; mysql_down=no
healthy() { [[ $(status_of "$base/healthz") == 200 ]]; }
kt_wait_for 90 healthy || fail "/healthz not 200 again after MySQL came back: $(cat "$WORK/body")"
kt_gen "$topic" --lines 5000 --seed 88 --truth "$WORK/t3" > "$WORK/gen3"
messages=$((messages + $(summary messages "$WORK/gen3")))
kt_wait_for 60 records_are "$messages" || fail "records_total never reached $messages after MySQL came back"
kt_sum_truths "$WORK/t1" "$WORK/t2" "$WORK/t3" > "$WORK/truth"
kt_check_counts "$db" "$WORK/truth"
promtool check metrics < "$WORK/metrics.txt" > "$WORK/promtool.out" 2>&1 \
  || { cat "$WORK/promtool.out" >&2; fail "promtool check metrics failed after retries"; }

# The page, as a browser renders it: one bar per minute of the last six
# hours of log time that has ERROR lines, a row per partition.
chrome=(chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run
        --disable-background-networking --disable-component-update --disable-sync
        --window-size=1200,900)
timeout 120 "${chrome[@]}" --user-data-dir="$WORK/chrome1" --dump-dom "$base/" \
  > "$WORK/dom.html" 2> "$WORK/chrome.log" || { tail -5 "$WORK/chrome.log" >&2; fail "chromium --dump-dom failed"; }
grep -q '<svg id="errors-chart"' "$WORK/dom.html" || fail "the page has no chart"
bars=$(grep -o 'class="bar"' "$WORK/dom.html" | wc -l)
want_bars=$(kt_sql "$db" "SELECT COUNT(*) FROM error_log WHERE log_count > 0 AND log_time >
                          (SELECT MAX(log_time) FROM error_log) - INTERVAL 6 HOUR")
((bars > 0 && bars == want_bars)) || fail "the chart has $bars bars, error_log has $want_bars minutes in its last 6 hours"
grep -q 'not at the current time' "$WORK/dom.html" || fail "the page does not say the chart is in log time"
[[ $(grep -o "<td class=\"l\">$topic</td>" "$WORK/dom.html" | wc -l) == 4 ]] || fail "the lag table has no row per partition"
grep -q '<table id="batches">' "$WORK/dom.html" || fail "the page has no table of batches"
grep -q '<script' "$WORK/dom.html" && fail "the page has a script"
timeout 120 "${chrome[@]}" --user-data-dir="$WORK/chrome2" --screenshot="$KT_BUILD/dashboard.png" \
  "$base/" > /dev/null 2>> "$WORK/chrome.log" || { tail -5 "$WORK/chrome.log" >&2; fail "chromium --screenshot failed"; }
[[ $(head -c 8 "$KT_BUILD/dashboard.png" | od -An -tx1 | tr -d ' ') == 89504e470d0a1a0a ]] \
  || fail "no PNG screenshot at $KT_BUILD/dashboard.png"

# A second instance on the same port, or a bad address: usage errors,
# before anything is touched.
"$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --http "127.0.0.1:$port" \
  2> "$WORK/busy.log" && fail "a second --http on a port in use started"
rc=$?; [[ $rc == 2 ]] || fail "a port in use exited $rc, not 2"
grep -q "cannot listen: Address already in use" "$WORK/busy.log" || fail "no reason for the busy port: $(cat "$WORK/busy.log")"
"$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --http "localhost" \
  2> "$WORK/bad.log" && fail "--http localhost started"
rc=$?; [[ $rc == 2 ]] || fail "a bad --http exited $rc, not 2"

kill -TERM "$ktally"; wait "$ktally" || fail "ktally did not exit 0 on SIGTERM"
port_busy "$port" && fail "the HTTP port is still open after ktally stopped"
note "$TEST_NAME: $messages records; /metrics, /healthz, limits and the page checked; screenshot in $KT_BUILD/dashboard.png"
