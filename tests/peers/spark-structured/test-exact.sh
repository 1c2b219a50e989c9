#!/usr/bin/env bash
# tests/peers/spark-structured/test-exact.sh - the Structured Streaming peer
# (Kafka source, foreachBatch fenced on the query's id and the batch id) is
# exact through a kill -9 and a batch replayed after its commit.
#
# Proves: with records arriving all the time, the driver killed -9 at a
# random point of its batches (0-1000 ms after a commit with records) and
# started again from its checkpoint directory, error_log ends equal to
# kt-gen's per-minute truth. Then the crash the fence is for: the
# last batch's counts are committed but Spark's commits/N is not (a kill
# between the two, or a COMMIT whose answer was lost: the batch failed
# after MariaDB committed). Removing commits/N makes the next start run
# batch N again on the same offsets (Spark's offsets/N); the fence must
# skip it and error_log stay exact. The tables must be ktally's.
# Red when: the fence is dropped or keyed wrongly (the replayed batch is
# counted twice), the counts and the fence commit apart, a restart reads
# from anywhere but the checkpoint's offsets (the default "latest" skips
# the backlog), the peer reads lines differently from ktally (kt-gen writes
# malformed lines, impossible dates among them), or its tables drift from
# sql/.
# broker: apache — Spark's Kafka source is the Java client, which times
# out reading metadata from librdkafka's mock broker (as the DStream peer;
# KT_KAFKA=apache: `scripts/services start --kafka apache`).
# Needs: mvn and Java 17 (tests/peers/spark-structured/build: Spark's jars,
# which scripts/setup fetches into KT_MAVEN_REPO), and ~1.5 GB of memory for
# the driver (KT_SPARK_HEAP 512m).
# Takes 50-150 s here (three Spark starts of 5-20 s each, ~20 s of data).
# One kill, not two: the second kill of the other peers' tests bought no
# path this one lacks (Spark replays a batch without commits/N the same way
# every time), and the replay after a committed batch, which is the path
# the fence is for, is made certain below instead of left to timing.
#
# Run: scripts/services start --kafka apache && tests/peers/spark-structured/test-exact.sh
# (KT_SRC and KT_BUILD default to this checkout and its build/).
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export KT_SRC=${KT_SRC:-$(cd "$here/../../.." && pwd)}
export KT_BUILD=${KT_BUILD:-$KT_SRC/build}
# shellcheck source=../../integration/lib.sh
source "$KT_SRC/tests/integration/lib.sh"
# shellcheck source=../common/test-lib.sh
source "$here/../common/test-lib.sh"

peer_build KT_STRUCTURED_PEER_DIR
export KT_SPARK_HEAP=${KT_SPARK_HEAP:-512m}
# Spark's shuffle files: a kill -9 leaves them, kt_cleanup removes $WORK.
export SPARK_LOCAL_DIRS=$WORK/spark
mkdir -p "$SPARK_LOCAL_DIRS"

topic=$(kt_new_topic structured_exact 8)
db_uri=$(kt_new_db structured_exact)
db=$(kt_db_name "$db_uri")
checkpoint=$WORK/checkpoint

PEER_ARGS=(--checkpoint "$checkpoint")

with_records() {  # with_records LOG: how many batches with records committed
  local n
  n=$(grep -c '^kt-structured-peer: committed batch=[0-9]* records=[1-9]' "$1" 2> /dev/null) || true
  echo "${n:-0}"
}

has_records() {  # has_records LOG N: more than N batches with records committed, the peer alive
  peer_alive "$1"
  (($(with_records "$1") > $2))
}

kill_random() {  # kill_random LOG: kill -9 0-1000 ms after the next commit with records
  local ms n
  n=$(with_records "$1")
  kt_wait_for 120 has_records "$1" "$n" || fail "no batch with records committed within 120 s (log $1)"
  ms=$(kt_rand 1000)
  sleep "$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))"
  kill -9 "$PEER_PID" 2> /dev/null || fail "the peer was gone before its kill -9 (log $1)"
  wait "$PEER_PID" 2> /dev/null || true
  note "killed -9 $ms ms after a commit with records, in batch" \
    "$(grep -c '^kt-structured-peer: begin batch=' "$1") of this run"
}

run_idle() {  # run_idle LOG: a run with --exit-when-idle, which must end with 0
  local pid
  peer_start "$1" --exit-when-idle
  pid=$PEER_PID
  kt_wait_for 300 bash -c "! kill -0 $pid 2> /dev/null" || fail "the run did not go idle within 300 s (log $1)"
  wait "$pid" || { tail -5 "$1" >&2; fail "the run exited non-zero (log $1)"; }
}

# --- a backlog, then records arriving through a kill -9 -----------------------
# The records start arriving once the backlog's batch is in: on a loaded
# machine the driver's start took 36 s and its first batch then held
# everything written meanwhile (800,000 lines: minutes of local[2]).
peer_backlog "$topic"
peer_start "$WORK/run1.log" --interval 1
kt_wait_for 300 has_records "$WORK/run1.log" 0 || fail "no commit within 300 s (log $WORK/run1.log)"
peer_check_tables "$db"
peer_live_records "$topic"
kill_random "$WORK/run1.log"

peer_stop_records
run_idle "$WORK/run2.log"
grep -q "^kt-structured-peer: started .* query_id=$(sed -n 's/.* query_id=\([^ ]*\) .*/\1/p' "$WORK/run1.log") " \
  "$WORK/run2.log" || fail "the restart is not the same query (another checkpoint?)"
peer_truth
kt_check_counts "$db" "$WORK/truth"
note "exact after a kill -9: $(wc -l < "$WORK/truth") minutes, $(peer_records) records in" \
  "$(ls "$WORK"/gen.* | wc -l) kt-gen runs"

# --- a batch committed in MariaDB but not in Spark's commit log ---------------
# The newest batch that wrote counts (the fence's batch id) loses its
# commits/N, as if the driver died right after the JDBC COMMIT.
last=$(kt_sql "$db" "SELECT batch_id FROM structured_commit")
[[ -n $last && -e $checkpoint/commits/$last ]] || fail "no commit log entry for the fenced batch '$last'"
kt_gen "$topic" --lines 3000 --seed "$((KT_SEED + 1000))" --start "2017-09-01 10:00:00" \
  --truth "$WORK/truth.fence" > /dev/null || fail "kt-gen (after the replay) failed"
rm -f "$checkpoint/commits/$last" "$checkpoint/commits/.$last.crc"
run_idle "$WORK/run3.log"
grep -q "^kt-structured-peer: skipped batch=$last " "$WORK/run3.log" \
  || { tail -5 "$WORK/run3.log" >&2; fail "batch $last was not replayed and skipped by the fence"; }
peer_truth
kt_check_counts "$db" "$WORK/truth"
note "batch $last replayed after its counts were committed: skipped by the fence; the next records counted"
echo "PASS: $TEST_NAME"
