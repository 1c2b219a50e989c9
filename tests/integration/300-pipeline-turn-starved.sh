#!/usr/bin/env bash
# The pipelined batch must not starve the loop's turn: turn() (run.c)
# returns before the caller's hook while a commit is in flight, and with
# --interval 0 a batch that cannot be planned ahead (here: a job of two
# topics, one of them quiet, so plan_ahead refuses every time) lands and
# launches the next one inside run_batch, without any turn in between.
# The hook is what feeds systemd's watchdog (WATCHDOG=1), applies SIGHUP
# (RELOADING=1) and says STOPPING=1: under systemd, WatchdogSec kills a
# ktally that is working through a backlog, and a reload waits until the
# backlog is gone. Red on the pipeline branch as first written.
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

db_uri=$(kt_new_db pturn); db=$(kt_db_name "$db_uri")
busy=$(kt_new_topic pturn_busy 2)
quiet=$(kt_new_topic pturn_quiet 1)
kt_gen "$busy" --lines 40000 --seed 31 --truth "$WORK/truth" > "$WORK/gen"

sock=$WORK/notify.sock
kt_notify_listen "$sock" "$WORK/heard"
kt_wait_for 5 test -S "$sock" || fail "the listener did not start"

# Tiny batches: a long backlog of commits, one always in flight.
NOTIFY_SOCKET=$sock WATCHDOG_USEC=400000 "$KTALLY" run --brokers "$KT_BROKERS" \
  --topic "$busy,$quiet" --job pturn --db "$db_uri" --interval 0 --max-per-partition 5 \
  --log-format json 2> "$WORK/run.log" &
pid=$!; KT_CHILDREN+=($pid)
kt_wait_for 30 grep -qx "READY=1" "$WORK/heard" || { cat "$WORK/run.log" >&2; fail "no READY=1"; }
kt_wait_for 30 bash -c "(( \$(grep -c '\"event\":\"batch\"' '$WORK/run.log') > 20 ))" \
  || fail "no batches"

pings=$(grep -c "^WATCHDOG=1$" "$WORK/heard" || true)
sleep 1.2
pings2=$(grep -c "^WATCHDOG=1$" "$WORK/heard" || true)
batches=$(grep -c '"event":"batch"' "$WORK/run.log")
kill -HUP "$pid"
reloaded=yes
kt_wait_for 5 grep -q "^RELOADING=1" "$WORK/heard" || reloaded=no
lag=$(kt_sql "$db" "SELECT 40000 - COALESCE(SUM(\`offset\`), 0) FROM kafka_offset WHERE topic = '$busy'")
note "$batches batches so far, $((pings2 - pings)) WATCHDOG=1 in 1.2 s (WATCHDOG_USEC=400000), " \
  "RELOADING=1 within 5 s of SIGHUP: $reloaded, $lag records still to commit"
((lag > 0)) || note "the backlog ran out before the check: raise --lines"
(( pings2 - pings >= 5 )) \
  || fail "$((pings2 - pings)) WATCHDOG=1 in 1.2 s while batches commit back to back (want >= 5): systemd's WatchdogSec would kill it"
[[ $reloaded == yes ]] || fail "SIGHUP not applied within 5 s while batches commit back to back"
kt_stop "$pid"
