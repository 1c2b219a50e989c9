#!/usr/bin/env bash
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
# The dashboard and the alerts shipped in samples/ work on ktally's real
# /metrics: `promtool check rules` passes on samples/ktally-alerts.yml,
# `promtool test rules` (tests/alerts/ktally-alerts-test.yml) shows each
# alert firing when and as it should and quiet otherwise, and a private
# Prometheus (Debian's prometheus, scripts/setup installs it) scrapes a
# running ktally every second, loads the alert rules (each evaluates without
# an error), and answers every query of samples/ktally-dashboard.json
# (Grafana's $ktally_job and $__rate_interval filled in) with data: a query
# that names a series or label ktally does not export comes back empty and
# fails the test, as does the Job variable's label_values(). The job counts
# --by keys past --max-keys and reads malformed lines, so the folded and
# malformed panels have data too. The mock broker: nothing here needs
# Apache Kafka.
source "$(dirname "$0")/lib.sh"
for tool in promtool prometheus jq; do
  command -v "$tool" > /dev/null || fail "$tool not found (scripts/setup installs it)"
done
rules=$KT_SRC/samples/ktally-alerts.yml
dashboard=$KT_SRC/samples/ktally-dashboard.json

promtool check rules "$rules" > "$WORK/check.out" 2>&1 || { cat "$WORK/check.out" >&2; fail "promtool check rules failed"; }
promtool test rules "$KT_SRC/tests/alerts/ktally-alerts-test.yml" > "$WORK/test.out" 2>&1 \
  || { cat "$WORK/test.out" >&2; fail "promtool test rules failed"; }
jq -e '.panels | length > 0' "$dashboard" > /dev/null || fail "$dashboard is not a dashboard"

# A job with keys past --max-keys and malformed lines, fed while it runs.
db_uri=$(kt_new_db dashboard)
topic=$(kt_new_topic dashboard 2)
kt_shape_options access --keys 50
kt_gen "$topic" --shape access --keys 50 --lines 2000 --seed "$KT_SEED" > /dev/null
"$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" "${KT_OPTS[@]}" --max-keys 5 \
  --interval 1 --http 127.0.0.1:0 --log-format json 2> "$WORK/run.log" &
KT_CHILDREN+=($!)
kt_wait_for 20 kt_log_has http "$WORK/run.log" || { cat "$WORK/run.log" >&2; fail "no port said"; }
port=$(kt_log_sum http port "$WORK/run.log")
kt_gen "$topic" --shape access --keys 50 --lines 6000 --rate 150 --seed $((KT_SEED + 1)) > /dev/null &
KT_CHILDREN+=($!)

# A private Prometheus: scrapes ktally every second and evaluates the rules.
pport=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat > "$WORK/prometheus.yml" <<CONF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: ["$rules"]
scrape_configs:
  - job_name: ktally
    static_configs: [{targets: ["127.0.0.1:$port"]}]
CONF
prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/tsdb" \
  --web.listen-address="127.0.0.1:$pport" --storage.tsdb.retention.time=1h --log.level=warn \
  2> "$WORK/prometheus.log" &
KT_CHILDREN+=($!)
api() {  # api PATH [curl args...]: the JSON answer of Prometheus's HTTP API
  curl -sf --max-time 10 -G "http://127.0.0.1:$pport/api/v1/$1" "${@:2}"
}
query() { api query --data-urlencode "query=$1"; }
scraped() { [[ $(query 'count_over_time(ktally_ready[40s])' | jq -r '.data.result[0].value[1] // 0') -ge 30 ]]; }
kt_wait_for 90 scraped || { tail -5 "$WORK/prometheus.log" >&2; fail "Prometheus did not scrape ktally 30 times in 90 s"; }
job=$topic
# A folded line must have been counted by now (50 keys, 5 kept per bucket and batch).
kt_wait_for 30 bash -c "curl -sf http://127.0.0.1:$port/metrics | grep -q '^ktally_lines_folded_total{ktally_job=\"$job\"} [1-9]'" \
  || fail "the job folded no line: the folded panel would have nothing to show"

# The Job variable, then every panel's every query.
api "label/ktally_job/values" | jq -e --arg j "$job" '.data | index($j) != null' > /dev/null \
  || fail "label_values(ktally_batches_total, ktally_job) lacks $job"
jq -e '.templating.list[] | select(.name == "ktally_job") | .definition == "label_values(ktally_batches_total, ktally_job)"' \
  "$dashboard" > /dev/null || fail "the Job variable asks something this test does not"
queries=0 nans=0
while IFS=$'\t' read -r title expr; do
  filled=${expr//\$ktally_job/$job}
  filled=${filled//\$__rate_interval/30s}
  [[ $filled != *'$'* ]] || fail "panel '$title': a variable this test does not fill: $expr"
  query "$filled" > "$WORK/answer" || fail "panel '$title': Prometheus refused $filled"
  jq -e '.status == "success" and (.data.result | length > 0)' "$WORK/answer" > /dev/null \
    || { cat "$WORK/answer" >&2; fail "panel '$title': no data for $filled"; }
  nans=$((nans + $(jq '[.data.result[].value[1] | select(. == "NaN")] | length' "$WORK/answer")))
  queries=$((queries + 1))
done < <(jq -r '.panels[] | select(.type != "row") | .title as $t | .targets[] | [$t, .expr] | @tsv' "$dashboard")
((queries >= 15)) || fail "only $queries queries found in the dashboard"
((nans == 0)) || fail "$nans answers were NaN (a ratio or quantile of nothing)"

# The alert rules loaded, each evaluated without an error.
api rules > "$WORK/rules.json"
[[ $(jq '[.data.groups[].rules[]] | length' "$WORK/rules.json") == $(grep -c '^ *- alert:' "$rules") ]] \
  || fail "Prometheus loaded $(jq '[.data.groups[].rules[]] | length' "$WORK/rules.json") rules of $(grep -c '^ *- alert:' "$rules")"
bad=$(jq -r '.data.groups[].rules[] | select(.health != "ok") | "\(.name): \(.lastError)"' "$WORK/rules.json")
[[ -z $bad ]] || fail "rules that did not evaluate: $bad"
note "$TEST_NAME: promtool check and test rules pass; $queries dashboard queries answered with data by a Prometheus scraping ktally; $(jq '[.data.groups[].rules[]] | length' "$WORK/rules.json") alert rules healthy"
