#!/usr/bin/env bash
# /livez, /readyz and /healthz in each state (#16). /livez is the batch
# loop turning (a liveness probe must not restart ktally for an outage it
# waits out); /readyz is committing: 503 while MySQL is down and while the
# lag is over --health-max-lag; a loop stuck past --health-max-stall makes
# /livez 503. /healthz keeps its documented rule (a success within
# max(3 intervals, 10 s)).
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

db_uri=$(kt_new_db health); db=$(kt_db_name "$db_uri")
topic=$(kt_new_topic health 3)
cat > "$WORK/ktally.conf" <<CONF
[kafka]
brokers = $KT_BROKERS
topic = $topic
[batch]
interval = 200ms
max-per-partition = 5
[http]
http = 127.0.0.1:0
health-max-lag = 100
health-max-stall = 2s
CONF
"$KTALLY" run --config "$WORK/ktally.conf" --db "$db_uri" -X reconnect.backoff.max.ms=200 \
  2> "$WORK/run.log" &
pid=$!; KT_CHILDREN+=("$pid")
kt_wait_for 10 grep -q "on port [0-9]* of" "$WORK/run.log" || fail "no --http line"
port=$(grep -o "on port [0-9]* of" "$WORK/run.log" | head -1 | awk '{ print $3 }')

probe() {  # probe PATH: "CODE first line of the body"
  curl -s -m 5 -o "$WORK/body" -w '%{http_code}' "http://127.0.0.1:$port$1" > "$WORK/code" || true
  echo "$(cat "$WORK/code") $(head -1 "$WORK/body")"
}
expect() {  # expect SECONDS PATH CODE TEXT: until PATH answers CODE with TEXT in its body
  local deadline=$((SECONDS + $1)) got
  while :; do
    got=$(probe "$2")
    [[ $got == "$3 "* && $got == *"$4"* ]] && return 0
    ((SECONDS < deadline)) || { cat "$WORK/run.log" >&2; fail "$2: '$got', wanted $3 with '$4' ($5)"; }
    sleep 0.1
  done
}

# Committing, caught up: all three 200.
expect 15 /readyz 200 "ready: committing" "caught up"
expect 1 /livez 200 "alive: the batch loop moved" "caught up"
expect 1 /healthz 200 "ok:" "caught up"

# Lag over --health-max-lag: batches of 5 a partition cannot keep up with
# 3000 lines; a reload of the cap catches up.
kt_gen "$topic" --lines 3000 --seed 171 --truth "$WORK/truth" > /dev/null
expect 10 /readyz 503 "over --health-max-lag 100" "lag"
expect 1 /livez 200 "alive" "lag"
sed -i 's/^max-per-partition = .*/max-per-partition = 100000/' "$WORK/ktally.conf"
kill -HUP "$pid"
expect 15 /readyz 200 "lag 0" "caught up after the reload"

# MySQL down: not ready at the first failed batch, still alive; back after.
# (The brokers down take the same path, a failed batch, only after
# ktally's 10 s Kafka timeout: too slow for this test; 72-fault-kafka.)
"$KT_SRC/scripts/services" kill-mysql > /dev/null
expect 10 /readyz 503 "failed" "MySQL down"
expect 1 /livez 200 "alive" "MySQL down"
"$KT_SRC/scripts/services" restart-mysql > /dev/null
expect 30 /readyz 200 "ready" "MySQL back"

# The loop stuck: a session holds kafka_offset, the next batch waits on it
# past --health-max-stall: not alive (and not ready); alive again after.
mariadb -h "$KT_MYSQL_HOST" -P "$KT_MYSQL_PORT" -u "$KT_MYSQL_USER" -p"$KT_MYSQL_PASSWORD" "$db" \
  -e "LOCK TABLES kafka_offset WRITE; SELECT SLEEP(3.5)" > /dev/null &
lock=$!
expect 8 /livez 503 "not alive: the batch loop moved" "stuck"
wait "$lock"
expect 10 /livez 200 "alive" "unstuck"
expect 10 /readyz 200 "ready" "unstuck"

kt_check_counts "$db" "$WORK/truth"
SECONDS_AT_END=$SECONDS; kt_stop "$pid" || fail "ktally did not stop with 0"
note "$TEST_NAME: /livez, /readyz, /healthz through lag, MySQL down and a stuck loop"
