#!/usr/bin/env bash
# tests/peers/spark/test-exact.sh - the Spark peer (the design's Spark program) is
# exact through two kill -9s of its driver, and stops on a missed fence.
#
# Proves: with records arriving all the time, the driver killed -9 twice
# at random points after it has committed (mostly inside a batch: reading,
# reducing or writing) and started again each time, error_log ends equal
# to kt-gen's per-minute truth and the stored offsets add up to every
# record produced: the counts and the offsets commit together, and a
# restart reads from the stored offsets. Then another writer moves a
# partition's offset under a running peer: the next batch, which carries
# fresh records, must roll back and the peer exit non-zero naming the
# fence, error_log untouched. Before all that, the peer's tables must have
# exactly the shape of ktally's (`ktally init-db`), so the bench checks
# both programs the same way.
# Red when: the offsets commit outside the counts' transaction (a kill
# between the two double-counts or loses a batch), the fence is dropped or
# not checked, the upserts are not rolled back with it, a restart starts
# anywhere but the stored offsets, the peer reads lines differently from
# ktally (kt-gen writes malformed lines, impossible dates among them), or
# its tables drift from sql/.
# broker: apache — the peer is Spark's Java Kafka client, which times out
# reading metadata from librdkafka's mock broker (KT_KAFKA=apache:
# `scripts/services start --kafka apache`).
# Needs: mvn and Java 17 (tests/peers/spark/build downloads ~280 MB from
# Maven Central into build/maven-repo on a fresh machine, or uses
# KT_MAVEN_REPO), and ~1.5 GB of memory for the driver (KT_SPARK_HEAP 512m).
# Takes 50-100 s here (five Spark starts of 4-10 s each, ~20 s of data).
#
# Run: scripts/services start --kafka apache && tests/peers/spark/test-exact.sh
# (KT_SRC and KT_BUILD default to this checkout and its build/).
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export KT_SRC=${KT_SRC:-$(cd "$here/../../.." && pwd)}
export KT_BUILD=${KT_BUILD:-$KT_SRC/build}
# shellcheck source=../../integration/lib.sh
source "$KT_SRC/tests/integration/lib.sh"
# shellcheck source=../common/test-lib.sh
source "$here/../common/test-lib.sh"

peer_build KT_SPARK_PEER_DIR
export KT_SPARK_HEAP=${KT_SPARK_HEAP:-512m}
# Spark's shuffle files: a kill -9 leaves them, kt_cleanup removes $WORK.
export SPARK_LOCAL_DIRS=$WORK/spark
mkdir -p "$SPARK_LOCAL_DIRS"

topic=$(kt_new_topic spark_exact 8)
db_uri=$(kt_new_db spark_exact)
db=$(kt_db_name "$db_uri")

count() {  # count WHAT LOG: how many batches the peer said began / committed
  local n  # 0, not nothing, before the peer has written its log
  n=$(grep -c "^kt-spark-peer: $1 batch=" "$2" 2> /dev/null) || true
  echo "${n:-0}"
}

has_commits() {  # has_commits LOG N: N commits, and the peer still alive
  peer_alive "$1"
  (($(count committed "$1") >= $2))
}

in_batch() {  # in_batch LOG: a batch with records has begun and not committed
  peer_alive "$1"
  (($(count begin "$1") > $(count committed "$1"))) \
    && [[ $(grep '^kt-spark-peer: begin batch=' "$1" | tail -1) != *" records=0" ]]
}

kill_peer() {  # kill_peer LOG: kill -9 inside a batch with records
  local ms before
  kt_wait_for 120 in_batch "$1" || fail "no batch with records began within 120 s (log $1)"
  before=$(count committed "$1")
  # Inside the batch: while Spark reads and reduces, or while the driver
  # writes (a batch here takes 100-500 ms).
  ms=$(kt_rand 300)
  sleep "0.$(printf '%03d' "$ms")"
  kill -9 "$PEER_PID" 2> /dev/null || fail "the peer was gone before its kill -9 (log $1)"
  wait "$PEER_PID" 2> /dev/null || true
  note "killed -9 $ms ms into batch $(count begin "$1") ($( (($(count committed "$1") > before)) \
    && echo "it had committed" || echo "uncommitted")); stored offsets add up to $(kt_offset_sum "$db" spark)"
}

# --- a backlog, then records arriving through two kill -9s --------------------
# The records start arriving once the backlog's batch is in: on a loaded
# machine (load 14) the driver took so long to start that its first batch,
# everything written meanwhile, did not commit within 120 s.
peer_backlog "$topic"
peer_start "$WORK/run1.log" --interval 1
kt_wait_for 300 has_commits "$WORK/run1.log" 1 || fail "no commit within 300 s (log $WORK/run1.log)"
peer_check_tables "$db"
peer_live_records "$topic"
kill_peer "$WORK/run1.log"

peer_start "$WORK/run2.log" --interval 1
kill_peer "$WORK/run2.log"

peer_stop_records
peer_start "$WORK/run3.log" --interval 1 --exit-when-idle
pid=$PEER_PID
kt_wait_for 300 bash -c "! kill -0 $pid 2> /dev/null" || fail "the last run did not go idle within 300 s"
wait "$pid" || { tail -5 "$WORK/run3.log" >&2; fail "the last run exited non-zero"; }

peer_truth
kt_check_counts "$db" "$WORK/truth"
records=$(peer_records)
[[ $(kt_offset_sum "$db" spark) == "$records" ]] \
  || fail "stored offsets add up to $(kt_offset_sum "$db" spark), not the $records records produced"
note "exact after two kill -9s: $(wc -l < "$WORK/truth") minutes, $records records in $(ls "$WORK"/gen.* | wc -l) kt-gen runs"

# --- a fence that misses rolls the batch back and stops the peer --------------
peer_start "$WORK/run4.log" --interval 5
pid=$PEER_PID
kt_wait_for 300 has_commits "$WORK/run4.log" 1 || fail "no commit within 300 s (log $WORK/run4.log)"
# Another writer moves partition 0, then records arrive for the next batch
# (5 s away): it upserts their counts before its fences, and must undo
# them. (Moved first, so that no batch can commit these records.)
kt_sql "$db" "UPDATE kafka_offset SET \`offset\` = \`offset\` + 1 WHERE job = 'spark' AND topic = '$topic' AND \`partition\` = 0"
kt_gen "$topic" --lines 3000 --seed "$((KT_SEED + 1000))" --start "2017-09-01 10:00:00" \
  > /dev/null || fail "kt-gen (fence batch) failed"
kt_wait_for 60 bash -c "! kill -0 $pid 2> /dev/null" || fail "the peer ran on for 60 s after a missed fence"
rc=0
wait "$pid" || rc=$?
((rc != 0)) || fail "the peer exited 0 after a missed fence"
grep -q "partition 0 is no longer at" "$WORK/run4.log" || { tail -5 "$WORK/run4.log" >&2; fail "the peer did not name the missed fence"; }
kt_check_counts "$db" "$WORK/truth"
note "a missed fence: exit $rc, the batch rolled back"
echo "PASS: $TEST_NAME"
