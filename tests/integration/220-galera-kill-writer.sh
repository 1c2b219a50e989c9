#!/usr/bin/env bash
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
db=$(kt_db_name "$(kt_new_db gkill)")
db_uri=$(ha_uri "$db" 1 2 3)
topic=$(kt_new_topic gkill 4)
log=$WORK/ktally.log

# Tiny batches back to back: a kill is likely to find a transaction open.
run_args=(run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --mode "$KT_MODE"
          --interval 0 --max-per-partition 20 --log-format json)
kt_feed_start feed "$topic" 3000 3000
kt_supervise ktally "${run_args[@]}"
commits() { kt_commits "$log"; }
committed_since() { (($(commits) > $1)); }
on_other_node() { [[ $(ha_writers "$db") =~ ^[0-9]$ && $(ha_writers "$db") != "$1" ]]; }
kt_wait_for 60 committed_since 5 || kt_sup_stuck ktally "no commits within 60 s"

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
held=0
for ((try = 0; try < 5 && !held; try++)); do
  kt_wait_for 60 committed_since "$(commits)" || kt_sup_stuck ktally "no commit before try $try"
  w=$(ha_writer "$db")
  frozen=$((w % 3 + 1))
  ha_stop "$frozen"
  if kt_wait_for 3 ha_commit_stuck "$w" "$db"; then
    ha_kill "$w"
    held=1
  fi
  ha_cont "$frozen"
  kt_wait_for 60 ha_ready "$frozen" || fail "node $frozen not back in the cluster"
done
((held)) || fail "no COMMIT could be held in flight in 5 tries"
kt_wait_for 90 committed_since "$(commits)" || kt_sup_stuck ktally "no commit after node $w died in a COMMIT"
(($(lost) > 0)) || fail "ktally did not report the COMMIT whose answer it lost on node $w"
rejoin2=$(ha_restart "$w")

kt_feed_stop feed
messages=$(<"$WORK/feed.messages")
ha_use "$w"  # rejoined: it has every commit (Galera); checks read it
kt_wait_for 60 kt_offsets_reach "$db" "$topic" "$messages" \
  || kt_sup_stuck ktally "ktally did not reach the end within 60 s"
kt_sup_stop ktally
exits=$(kt_sup_check ktally)
[[ $exits == 0 ]] || fail "ktally exited by itself: $exits (it must ride a node's failure out)"
kt_fault_verify "$db" "$topic" "$WORK/feed.truth" "$messages" "${run_args[@]}"

outcome() { kt_log_count_if ".event == \"lost-commit\" and .outcome == \"$1\"" "$log"; }
note "$TEST_NAME ($KT_MODE): 2 writer nodes killed (one in a COMMIT), ktally moved" \
  "$(kt_log_count db-server "$log") times, $(kt_log_count retry "$log") batches retried," \
  "$(lost) COMMIT answers lost ($(outcome landed) landed, $(outcome not-landed) did not)," \
  "longest wait between commits $(ha_gap "$log") s, rejoins ${rejoin1} and ${rejoin2} ms," \
  "exits: $exits, $(commits) commits, $(<"$WORK/feed.lines") lines, exact, $((SECONDS - t0)) s"
