#!/usr/bin/env bash
# tests/peers/flink/test-exact.sh - the Flink peer (KafkaSource, keyed
# windows, the JDBC connector's exactly-once XA sink) is exact through two
# kill -9s, one of them inside a checkpoint's XA window.
#
# Proves: with records arriving all the time, the JVM killed -9 twice and
# started again from its newest complete checkpoint each time, error_log
# ends equal to kt-gen's per-minute truth and no XA transaction is left
# prepared. The first kill lands at a random point of the checkpoint cycle
# (0-1000 ms after a commit with rows). The second lands inside the XA
# window: the JVM is stopped (SIGSTOP) at random moments until MariaDB
# lists one of the sink's transactions as prepared, then killed, so that a
# transaction is prepared and either its checkpoint completed (the restart
# commits it from the checkpoint: a COMMIT whose answer was lost) or not
# (the restart must roll it back: an orphan holding its rows' locks). Each
# restart must resume from a checkpoint, never from the topic's start. The
# tables must have exactly the shape of ktally's (`ktally init-db`).
# Red when: a restart starts from scratch or from an older checkpoint than
# the newest complete one, the sink's transactions are not prepared and
# committed with the checkpoints (a kill then loses or doubles rows), the
# orphan is not rolled back (with --no-xa-cleanup the restarted job waits
# on its row locks for innodb_lock_wait_timeout, fails, restarts and waits
# again: the last run never goes idle), the totals leave keyed state, the
# peer reads lines differently from ktally (kt-gen writes malformed lines,
# impossible dates among them), or its tables drift from sql/.
# broker: apache — the peer is Flink's KafkaSource (the Java client), which
# needs a real broker like the Spark peer (KT_KAFKA=apache:
# `scripts/services start --kafka apache`).
# Needs: mvn and Java 17 (tests/peers/flink/build: ~125 MB into
# build/maven-repo on a fresh machine, or KT_MAVEN_REPO, which
# scripts/setup fills), and ~1 GB of memory (KT_FLINK_HEAP 512m).
# Takes 60-120 s here (three Flink starts of 5-20 s each, ~20 s of data).
#
# Run: scripts/services start --kafka apache && tests/peers/flink/test-exact.sh
# (KT_SRC and KT_BUILD default to this checkout and its build/).
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export KT_SRC=${KT_SRC:-$(cd "$here/../../.." && pwd)}
export KT_BUILD=${KT_BUILD:-$KT_SRC/build}
# shellcheck source=../../integration/lib.sh
source "$KT_SRC/tests/integration/lib.sh"
# shellcheck source=../common/test-lib.sh
source "$here/../common/test-lib.sh"

peer_build KT_FLINK_PEER_DIR
export KT_FLINK_HEAP=${KT_FLINK_HEAP:-512m}

topic=$(kt_new_topic flink_exact 8)
db_uri=$(kt_new_db flink_exact)
db=$(kt_db_name "$db_uri")
checkpoints=$WORK/checkpoints

PEER_ARGS=(--checkpoints "$checkpoints")

has_rows() {  # has_rows LOG: a checkpoint with rows committed, the peer alive
  peer_alive "$1"
  grep -q '^kt-flink-peer: committed checkpoint=[0-9]* subtask=[0-9]* rows=[1-9]' "$1"
}

restored() {  # restored LOG: the checkpoint the run resumed from, or "-"
  sed -n 's/^kt-flink-peer: started .* restored_from=\([^ ]*\) .*/\1/p' "$1"
}

prepared() {  # prepared: how many XA transactions of this test's jobs MariaDB holds prepared
  local jobs
  jobs=$(ls "$checkpoints" 2> /dev/null | paste -sd'|')
  [[ -n $jobs ]] || { echo 0; return; }
  # The connector's xid: format 202, the global id starting with the job id
  # (the name of the job's checkpoint directory).
  kt_sql mysql "XA RECOVER FORMAT='SQL'" | awk -F'\t' -v re="^X'($jobs)" '$1 == 202 && $4 ~ re' | wc -l
}

kill_random() {  # kill_random LOG: kill -9 0-1000 ms after a commit with rows
  local ms
  kt_wait_for 300 has_rows "$1" || fail "no commit with rows within 300 s (log $1)"
  ms=$(kt_rand 1000)
  sleep "$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))"
  kill -9 "$PEER_PID" 2> /dev/null || fail "the peer was gone before its kill -9 (log $1)"
  wait "$PEER_PID" 2> /dev/null || true
  note "killed -9 $ms ms after a commit with rows; $(prepared) transaction(s) left prepared"
}

kill_in_xa_window() {  # kill_in_xa_window LOG: kill -9 while a transaction is prepared
  local tries=0 ms
  kt_wait_for 300 has_rows "$1" || fail "no commit with rows within 300 s (log $1)"
  # Frozen, the JVM can neither complete the checkpoint nor commit: what
  # MariaDB lists then is what the kill leaves. A window is a few to a few
  # tens of ms of each checkpoint's second here.
  while :; do
    peer_alive "$1"
    kill -STOP "$PEER_PID"
    (($(prepared) > 0)) && break
    kill -CONT "$PEER_PID"
    tries=$((tries + 1))
    ((tries < 3000)) || fail "no prepared XA transaction seen in 3000 stops (log $1)"
    ms=$(kt_rand 200)
    sleep "0.$(printf '%03d' "$ms")"
  done
  kill -9 "$PEER_PID"
  wait "$PEER_PID" 2> /dev/null || true
  note "killed -9 inside the XA window after $tries stops: $(prepared) transaction(s) prepared"
}

# --- a backlog, then records arriving through two kill -9s --------------------
peer_backlog "$topic"
peer_live_records "$topic"

peer_start "$WORK/run1.log"
# A JVM start took 20-36 s on the loaded machine: the first wait is long.
kt_wait_for 300 has_rows "$WORK/run1.log" || fail "no commit with rows within 300 s (log $WORK/run1.log)"
peer_check_tables "$db"
kill_random "$WORK/run1.log"

peer_start "$WORK/run2.log"
kill_in_xa_window "$WORK/run2.log"
[[ $(restored "$WORK/run2.log") == */chk-* ]] || fail "the second run did not resume from a checkpoint"

peer_stop_records
peer_start "$WORK/run3.log" --exit-when-idle
pid=$PEER_PID
kt_wait_for 240 bash -c "! kill -0 $pid 2> /dev/null" \
  || { tail -5 "$WORK/run3.log" >&2; fail "the last run did not go idle within 240 s"; }
wait "$pid" || { tail -5 "$WORK/run3.log" >&2; fail "the last run exited non-zero"; }
[[ $(restored "$WORK/run3.log") == */chk-* ]] || fail "the last run did not resume from a checkpoint"
rolled=$(sed -n 's/^kt-flink-peer: started .* xa_rolled_back=\([0-9]*\) .*/\1/p' "$WORK/run3.log")

peer_truth
kt_check_counts "$db" "$WORK/truth"
(($(prepared) == 0)) || fail "$(prepared) XA transaction(s) of the sink left prepared"
note "exact after two kill -9s: $(wc -l < "$WORK/truth") minutes, $(peer_records) records in" \
  "$(ls "$WORK"/gen.* | wc -l) kt-gen runs; the XA-window kill left $( ((rolled > 0)) \
  && echo "$rolled orphan(s), rolled back at the restart" \
  || echo "a prepared transaction its checkpoint knew, committed at the restart")"
echo "PASS: $TEST_NAME"
