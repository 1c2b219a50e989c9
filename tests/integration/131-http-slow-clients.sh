#!/usr/bin/env bash
# --http against slow clients (issue 11 item 14): twenty connections from
# the scraper's own address, most trickling their headers, some a request
# body after complete headers, and forty more from five other addresses,
# do not lock a scraper out: /metrics answers within 2 s all along; every
# trickler is cut (a body on GET or HEAD at once with 413, a header within
# the deadline); a GET with a body is refused with 413 and the connection
# closed.
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

command -v curl > /dev/null || fail "curl not found (scripts/setup installs it)"

db_uri=$(kt_new_db slowhttp)
topic=$(kt_new_topic slowhttp 2)
kt_gen "$topic" --lines 100 --seed 131 > /dev/null
"$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --interval 1 \
  --http 127.0.0.1:0 2> "$WORK/run.log" &
ktally=$!; KT_CHILDREN+=("$ktally")
port=$(kt_http_port "$WORK/run.log") || { tail -5 "$WORK/run.log" >&2; fail "no --http port logged"; }
base=http://127.0.0.1:$port
scrape() { curl -sf --max-time 2 -o "$WORK/metrics.txt" "$base/metrics"; }
kt_wait_for 30 scrape || { tail -5 "$WORK/run.log" >&2; fail "/metrics never answered"; }

# Twenty slow clients from 127.0.0.1, the scraper's own address (twice the
# per-address limit): sixteen trickle a header line every half second,
# four send complete headers of a GET announcing a body and trickle the
# body. And forty from five other addresses (past the total limit of 32).
trap '' PIPE  # a connection the server closed is an error to write, not a death
start=$SECONDS
/usr/bin/python3 - "$port" "$WORK/crowd.connected" > "$WORK/crowd.out" 2>&1 <<'PY' &
import socket, sys, time
conns = []
for host in range(2, 7):
    for _ in range(8):
        s = socket.socket()
        s.bind(("127.0.0.%d" % host, 0))
        s.connect(("127.0.0.1", int(sys.argv[1])))
        s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
        conns.append(s)
open(sys.argv[2], "w").close()  # all connected
for k in range(40):
    time.sleep(0.5)
    for s in conns:
        try:
            s.sendall(b"X-Slow-%d: y\r\n" % k)
        except OSError:
            pass
PY
crowd=$!; KT_CHILDREN+=("$crowd")
conns=()
for ((i = 0; i < 20; i++)); do
  exec {fd}<> "/dev/tcp/127.0.0.1/$port"; conns+=("$fd")
  if ((i % 5 != 4)); then
    printf 'GET /metrics HTTP/1.1\r\nHost: x\r\n' >&"$fd" 2> /dev/null || true
    ( for ((k = 0; k < 40; k++)); do sleep 0.5; printf 'X-Slow-%d: y\r\n' "$k" >&"$fd" || exit 0; done ) 2> /dev/null &
  else
    printf 'GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n' >&"$fd" 2> /dev/null || true
    ( for ((k = 0; k < 40; k++)); do sleep 0.5; printf 'x' >&"$fd" || exit 0; done ) 2> /dev/null &
  fi
  KT_CHILDREN+=($!)
done

# The crowd in place before the scraper comes, accepted by the server,
# not only connected: a connection waits in the listening socket's accept
# queue until libmicrohttpd accepts it, one at a time, and one it accepts
# after the scraper's is newer, so that enough of them cut the scraper as
# the oldest from its address (the first scrape failed at once under
# ASan, seed 21637: a thread per connection makes accepting slow). Once
# the queue is empty every earlier connection was accepted (and
# registered: the same thread does both), and the scraper's comes after
# them all.
accepted_all() {  # the server's accept queue is empty (/proc/net/tcp: rx_queue of its socket)
  local hex sl local remote st queues rest
  hex=$(printf '%04X' "$port")
  while read -r sl local remote st queues rest; do
    [[ $st == 0A && ${local##*:} == "$hex" ]] && { ((16#${queues#*:} == 0)); return; }
  done < /proc/net/tcp
  return 1
}
kt_wait_for 10 test -e "$WORK/crowd.connected" || fail "the crowd did not connect: $(cat "$WORK/crowd.out")"
kt_wait_for 10 accepted_all || fail "the server did not accept the crowd's connections within 10 s"

# The scraper, meanwhile: every answer within 2 s.
for ((i = 0; i < 6; i++)); do
  t0=$(date +%s%N)
  scrape || fail "/metrics did not answer within 2 s with 60 slow clients connected (try $i)"
  note "$TEST_NAME: scrape $i with the slow clients connected: $(( ($(date +%s%N) - t0) / 1000000 )) ms"
  sleep 1
done

# Every slow client is cut: read each connection to its end (they are cut
# concurrently: the first read waits, the rest find their end).
for ((i = 0; i < 20; i++)); do
  left=$((start + 16 - SECONDS)); ((left > 0)) || left=1
  timeout "$left" cat <&"${conns[$i]}" > "$WORK/answer.$i" 2> /dev/null \
    || fail "slow client $i was not cut within 16 s of its start"
  # A body trickler gets 413, unless it was cut first to make room for a
  # newer client from its address (then it gets nothing): never a 200.
  if ((i % 5 == 4)) && [[ -s $WORK/answer.$i ]]; then
    head -1 "$WORK/answer.$i" | grep -q '^HTTP/1.1 413' \
      || fail "a GET with a body got $(head -1 "$WORK/answer.$i"), not 413"
  fi
done
for fd in "${conns[@]}"; do exec {fd}>&-; done
kill -0 "$crowd" 2> /dev/null && [[ ! -s $WORK/crowd.out ]] \
  || fail "the crowd from other addresses did not run: $(cat "$WORK/crowd.out")"
kill "$crowd"
note "$TEST_NAME: 20 slow clients from the scraper's address cut within $((SECONDS - start)) s"

# A GET or HEAD with a body, whole or chunked: 413, and the connection is
# closed, the body never read.
code=$(curl -s -o "$WORK/body" -w '%{http_code}' --max-time 5 -X GET --data-binary 'x=1' "$base/metrics")
[[ $code == 413 ]] || fail "a GET with a body got $code, not 413"
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 -X GET -H 'Transfer-Encoding: chunked' \
  --data-binary 'x=1' "$base/")
[[ $code == 413 ]] || fail "a chunked GET got $code, not 413"
curl -s -D "$WORK/headers" -o /dev/null --max-time 5 -X HEAD -H 'Content-Length: 5' "$base/healthz" || true
grep -qi '^Connection: close' "$WORK/headers" || fail "the connection is kept after a HEAD with a body"
[[ $(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$base/metrics") == 200 ]] \
  || fail "/metrics does not answer after the slow clients"

kt_stop "$ktally" || fail "ktally did not exit 0 on SIGTERM"
note "$TEST_NAME: scraper served throughout, slow clients cut, bodies on GET refused in $((SECONDS - start)) s"
