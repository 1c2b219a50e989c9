#!/usr/bin/env bash
# Apache Kafka brokers failing under a running job, while an acks=all
# producer (kt-gen: enable.idempotence, so acks=all) keeps writing to a
# topic of 6 partitions on 3 replicas with min.insync.replicas 2:
#  1. kill -9 of the broker that leads some of the job's partitions, in
#     the middle of batches; it is started again later;
#  2. a broker paused (SIGSTOP) for 12 s, past the consumer's request
#     timeout (-X socket.timeout.ms=8000), ktally's own Kafka timeouts
#     (10 s) and the controller's session timeout (6 s), then resumed;
#  3. the whole cluster killed -9 and started again.
# ktally runs under a supervisor (restarted when it exits, as systemd
# would): after each fault it must commit again by itself, and any exit
# on the way must be non-zero with exactly one line saying why, never a
# signal, a usage error or a data-loss exit. Then the counts equal
# kt-gen --truth, the offsets equal what was produced, and the audit chain
# is whole. KT_MODE: transactional or idempotent. Red if ktally hangs
# after a fault (no commit within 90 s), dies of a signal, exits without
# its one line or exits 0 unasked, or a count is lost or doubled.
# broker: apache — broker processes killed -9, paused and restarted, leaders moved by a real controller: the mock has no processes
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/faults.sh"

db_uri=$(kt_new_db bfaults); db=$(kt_db_name "$db_uri")
topic=$(kt_new_topic bfaults 6 --replication 3 --config min.insync.replicas=2)
KT_FAULT_APACHE=yes
t0=$SECONDS

run_args=(run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --mode "$KT_MODE"
          --interval 0 --max-per-partition 500 --log-format json -X socket.timeout.ms=8000)
commits() { kt_commits "$WORK/ktally.log"; }
committed_since() { (($(commits) > $1)); }
commits_again() {  # commits_again WHAT: ktally commits new batches within 90 s
  local before; before=$(commits)
  kt_wait_for 90 committed_since "$before" || kt_sup_stuck ktally "no batch committed within 90 s after $1"
}
leader_of() {  # leader_of PARTITION
  kt_admin describe "$topic" | awk -v p="$1" '$1 == p { sub("leader=", "", $2); print $2 }'
}
led_by() {  # led_by NODE: the partitions NODE leads, comma-separated
  kt_admin describe "$topic" | awk -v n="leader=$1" '$2 == n { printf "%s%s", s, $1; s = "," }'
}
not_in_isr() { ! kt_admin describe "$topic" | grep -q "isr=\(.*,\)\?$1\(,\|$\)"; }

kt_feed_start feed "$topic" 4000 4000
kt_supervise ktally "${run_args[@]}"
kt_wait_for 60 committed_since 0 || kt_sup_stuck ktally "ktally committed nothing in 60 s"

# 1. The leader of some partitions, killed -9 mid-batch.
victim=$(leader_of "$(kt_rand 6)")
led=$(led_by "$victim")
commits_again "the start"
kt_broker kill "$victim"
t1=$SECONDS
commits_again "broker $victim (leader of partitions $led) was killed -9"
kt_wait_for 30 not_in_isr "$victim" || fail "broker $victim still in an ISR 30 s after its kill -9"
commits_again "the ISR shrank"
note "leader $victim of partitions $led killed -9: commits again after $((SECONDS - t1)) s"
kt_broker restart "$victim"
kt_admin wait-isr "$topic" 60 || fail "broker $victim did not come back into every ISR"
commits_again "broker $victim came back"

# 2. A broker paused past the request timeouts, then resumed.
paused=$(leader_of "$(kt_rand 6)")
kt_broker pause "$paused"
t1=$SECONDS
sleep 12
kt_broker resume "$paused"
commits_again "broker $paused was resumed"
kt_admin wait-isr "$topic" 60 || fail "resumed broker $paused did not come back into every ISR"
note "broker $paused paused for 12 s: commits again $((SECONDS - t1 - 12)) s after its resume"

# 3. The whole cluster killed -9, then started again.
for ((n = 1; n <= KT_KAFKA_NODES; n++)); do kt_broker kill "$n"; done
t1=$SECONDS
sleep 1
"$KT_SERVICES" start > "$WORK/cluster-start.out" 2>&1 || { cat "$WORK/cluster-start.out" >&2; fail "the cluster did not start again"; }
note "cluster down and up again in $((SECONDS - t1)) s"
commits_again "the whole cluster was restarted"
kt_admin wait-isr "$topic" 60 || fail "the partitions did not get every replica back in sync"

kt_feed_stop feed
kt_sup_stop ktally
exits=$(kt_sup_check ktally)
# Every exit that was not ours has exactly one line saying why.
nonzero=$(awk '$1 != 0 && $1 != 137 { n++ } END { print n + 0 }' "$WORK/ktally.exits")
said=$(kt_exit_lines "$WORK/ktally.log" | wc -l)
((said == nonzero)) || { kt_exit_lines "$WORK/ktally.log" >&2; fail "$nonzero non-zero exits but $said exit lines"; }
kt_fault_verify "$db" "$topic" "$WORK/feed.truth" "$(cat "$WORK/feed.messages")" "${run_args[@]}"
note "$TEST_NAME ($KT_MODE): leader kill -9, 12 s pause, whole-cluster restart; $(cat "$WORK/feed.lines") lines exact," \
  "$(commits) batches, exits: $exits, $((SECONDS - t0)) s"
