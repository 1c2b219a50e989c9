#!/usr/bin/env bash
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
# Galera: the node ktally writes to is killed (kill -9), first at a random
# moment of its stream of batches, then in the middle of a COMMIT, while
# data keeps arriving. ktally, given the three nodes (--db with a hosts
# list), moves to the next node by itself, and the final table is exact,
# the offsets add up to what was produced, and `ktally audit` is clean
# (KT_MODE transactional or idempotent).
#
# A COMMIT is held in flight by SIGSTOPping another node: a Galera commit
# waits for the cluster (flow control), so the writer's COMMIT hangs until
# the writer is killed; its answer is lost, and ktally must learn from the
# node it reconnects to whether it landed (reads there wait for the
# cluster's commits: wsrep_sync_wait).
#
# Red if ktally stays on the dead node or exits, a lost COMMIT is counted
# twice or not at all (counts differ), or the audit finds a broken chain.
# Before the hosts list, ktally had one server: it retried the dead node
# until it came back. Needs `scripts/services start --mysql galera`; any
# broker (lib.sh's broker-independent helpers only).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/faults.sh"
source "$(dirname "$0")/ha.sh"

ha_need galera
t0=$SECONDS
ha_job gkill
on_other_node() { [[ $(ha_writers "$db") =~ ^[0-9]$ && $(ha_writers "$db") != "$1" ]]; }

# 1. At a random moment of the batches.
w=$(ha_writer "$db")
kt_sleep_ms 100 1500
ha_kill "$w"
before=$(commits)
kt_wait_for 60 on_other_node "$w" || kt_sup_stuck ktally "ktally did not move off the killed node $w"
kt_wait_for 60 committed_since "$before" || kt_sup_stuck ktally "no commit on another node after node $w was killed"
rejoin1=$(ha_restart "$w")

# 2. In the middle of a COMMIT: another node frozen holds it; then the
# writer dies with it.
lost() { kt_log_count lost-commit "$log"; }
ha_in_commit "$db" "$log" ha_kill
w=$HA_NODE
kt_wait_for 90 committed_since "$(commits)" || kt_sup_stuck ktally "no commit after node $w died in a COMMIT"
kt_wait_for 30 ha_commit_failed "$log" || fail "ktally did not report the COMMIT whose answer it lost on node $w"
rejoin2=$(ha_restart "$w")

ha_use "$w"  # rejoined: it has every commit (Galera); checks read it
ha_job_end

outcome() { kt_log_count_if ".event == \"lost-commit\" and .outcome == \"$1\"" "$log"; }
note "$TEST_NAME ($KT_MODE): 2 writer nodes killed (one in a COMMIT), ktally moved" \
  "$(kt_log_count db-server "$log") times, $(kt_log_count retry "$log") batches retried," \
  "$(lost) COMMIT answers lost ($(outcome landed) landed, $(outcome not-landed) did not)," \
  "longest wait between commits $(ha_gap "$log") s, rejoins ${rejoin1} and ${rejoin2} ms," \
  "$(commits) commits, $(<"$WORK/feed.lines") lines, exact, $((SECONDS - t0)) s"
