#!/usr/bin/env bash
# Type=notify without systemd: a listener on $NOTIFY_SOCKET (a path, then
# an abstract @name) hears what ktally tells systemd. READY=1 only once
# Kafka, MySQL and the tables answered (and the counts are then exact),
# STATUS= with the lag, WATCHDOG=1 from the batch loop at a quarter of
# $WATCHDOG_USEC (not when $WATCHDOG_PID names another process),
# RELOADING=1 then READY=1 around a SIGHUP, STOPPING=1 on SIGTERM.
# A start that migrates the schema (here: waits for another instance's
# migration, the schema lock held by a session for 12 s) sends
# EXTEND_TIMEOUT_USEC=30000000 at once and every 10 s while it waits, and
# never after READY=1: systemd's start timeout (90 s by default) would
# otherwise kill a long ALTER TABLE and restart it in a loop (red before:
# no EXTEND_TIMEOUT_USEC at all). The mock broker: Kafka plays no part.
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

db_uri=$(kt_new_db notify); db=$(kt_db_name "$db_uri")
topic=$(kt_new_topic notify 4)
kt_gen "$topic" --lines 20000 --seed 17 --truth "$WORK/truth" > "$WORK/gen"

sock=$WORK/notify.sock
kt_notify_listen "$sock" "$WORK/heard"
kt_wait_for 5 test -S "$sock" || fail "the listener did not start"

# Under systemd with a watchdog of 0.4 s: pings every 0.1 s or so.
NOTIFY_SOCKET=$sock WATCHDOG_USEC=400000 "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" \
  --db "$db_uri" --interval 0.3 --log-format json 2> "$WORK/run.log" &
pid=$!; KT_CHILDREN+=($pid)
kt_wait_for 30 grep -qx "READY=1" "$WORK/heard" || { cat "$WORK/run.log" >&2; fail "no READY=1"; }
# READY=1 comes after the tables exist: nothing is ready before they are.
[[ $(kt_sql "$db" "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = '$db' AND table_name = 'kafka_offset'") == 1 ]] \
  || fail "READY=1 before ktally's tables were there"
kt_wait_for 30 grep -q "^STATUS=job $topic: lag 0," "$WORK/heard" \
  || { tail -5 "$WORK/heard" >&2; fail "no STATUS= with lag 0 after the backlog"; }
kt_check_counts "$db" "$WORK/truth"

pings=$(grep -c "^WATCHDOG=1$" "$WORK/heard")
sleep 1.2
pings2=$(grep -c "^WATCHDOG=1$" "$WORK/heard")
(( pings2 - pings >= 5 )) || fail "$((pings2 - pings)) WATCHDOG=1 in 1.2 s with WATCHDOG_USEC=400000 (want >= 5)"
(( pings2 - pings <= 20 )) || fail "$((pings2 - pings)) WATCHDOG=1 in 1.2 s: far more than a quarter of the period asks"

kill -HUP "$pid"
kt_wait_for 10 grep -q "^RELOADING=1|MONOTONIC_USEC=[0-9]*$" "$WORK/heard" || fail "no RELOADING=1 after SIGHUP"
[[ $(grep -A1 "^RELOADING=1" "$WORK/heard" | tail -1) == "READY=1" ]] \
  || kt_wait_for 5 bash -c "grep -A1 '^RELOADING=1' '$WORK/heard' | tail -1 | grep -qx READY=1" \
  || fail "no READY=1 right after RELOADING=1"
kt_stop "$pid"
grep -qx "STOPPING=1" "$WORK/heard" || fail "no STOPPING=1 on SIGTERM"
[[ $(grep -c "^READY=1$" "$WORK/heard") == 2 ]] || fail "READY=1 should come once at start and once after the reload"

# An abstract socket; a watchdog that belongs to another process is not ours.
kt_notify_listen "@kt-notify-$RUN_ID" "$WORK/heard2"
kt_wait_for 5 grep -q "kt-notify-$RUN_ID" /proc/net/unix || fail "the abstract listener did not start"
kt_gen "$topic" --lines 2000 --seed 18 --truth "$WORK/t2" > "$WORK/gen2"
NOTIFY_SOCKET=@kt-notify-$RUN_ID WATCHDOG_USEC=100000 WATCHDOG_PID=1 "$KTALLY" run \
  --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --interval 0 --exit-when-idle \
  2> "$WORK/run2.log" || { cat "$WORK/run2.log" >&2; fail "the second run failed"; }
kt_wait_for 5 grep -qx "STOPPING=1" "$WORK/heard2" || fail "no STOPPING=1 at the end of --exit-when-idle"
grep -qx "READY=1" "$WORK/heard2" || fail "no READY=1 on the abstract socket"
if grep -q "^WATCHDOG=1" "$WORK/heard2"; then fail "WATCHDOG=1 although WATCHDOG_PID names another process"; fi
kt_check_counts "$db" <(kt_sum_truths "$WORK/truth" "$WORK/t2")

# A start held in the schema's migration: the lock another instance would
# hold while it migrates, held here by a session for 12 s.
db3_uri=$(kt_new_db notify_migrate); db3=$(kt_db_name "$db3_uri")
lock="CONCAT('ktally_schema.', LEFT(SHA2(DATABASE(), 256), 40))"
kt_sql "$db3" "SELECT GET_LOCK($lock, 0), SLEEP(12)" > /dev/null &
KT_CHILDREN+=($!)
kt_wait_for 10 bash -c "[[ \$(mariadb -h '$KT_MYSQL_HOST' -P '$KT_MYSQL_PORT' -u '$KT_MYSQL_USER' -p'$KT_MYSQL_PASSWORD' -N -B '$db3' -e \"SELECT IS_USED_LOCK($lock) IS NOT NULL\") == 1 ]]" \
  || fail "the session did not take the schema lock"
kt_notify_listen "$WORK/notify3.sock" "$WORK/heard3"
kt_wait_for 5 test -S "$WORK/notify3.sock" || fail "the third listener did not start"
NOTIFY_SOCKET=$WORK/notify3.sock "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" \
  --db "$db3_uri" --interval 0 --exit-when-idle 2> "$WORK/run3.log" \
  || { cat "$WORK/run3.log" >&2; fail "the migrating run failed"; }
kt_wait_for 5 grep -qx "STOPPING=1" "$WORK/heard3" || fail "no STOPPING=1 after the migrating run"
grep -q "waiting for another ktally to finish migrating" "$WORK/run3.log" \
  || { cat "$WORK/run3.log" >&2; fail "the run did not wait for the schema lock"; }
ready_at=$(grep -nx "READY=1" "$WORK/heard3" | head -1 | cut -d: -f1)
[[ -n $ready_at ]] || fail "no READY=1 after the migration"
extends=$(head -n "$ready_at" "$WORK/heard3" | grep -cx "EXTEND_TIMEOUT_USEC=30000000" || true)
((extends >= 2)) || { cat "$WORK/heard3" >&2; fail "$extends EXTEND_TIMEOUT_USEC=30000000 before READY=1 in a 12 s wait (want one at once and one every 10 s)"; }
if tail -n +"$ready_at" "$WORK/heard3" | grep -q "^EXTEND_TIMEOUT_USEC"; then
  fail "EXTEND_TIMEOUT_USEC after READY=1: the start is over"
fi
grep -q "^STATUS=job $topic: migrating the database's schema$" "$WORK/heard3" || fail "no STATUS= while migrating"
kt_check_counts "$db3" <(kt_sum_truths "$WORK/truth" "$WORK/t2")

note "$TEST_NAME: READY, STATUS, $pings2 watchdog pings, RELOADING/READY, STOPPING; abstract socket; $extends EXTEND_TIMEOUT_USEC in a 12 s migration wait, none after READY; counts exact"
