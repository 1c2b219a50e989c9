#!/usr/bin/env bash
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
# Galera: the node ktally writes to leaves the cluster's primary component
# (cut off, gmcast.isolate: it stays up, answers, and refuses work with
# 1047 "WSREP has not yet prepared node for application use"), first
# between statements, then while a COMMIT of ktally's is in flight on it.
# ktally drops the connection, skips that node while it is out (one
# db-skip line, reason not-ready), writes on the next node of its list,
# and `ktally status` given the same list reads the next node too. The
# COMMIT cut off is an unknown outcome (the others may have committed it):
# read back, never guessed. Then the node rejoins; the final table is
# exact (KT_MODE transactional or idempotent), `ktally audit` clean.
#
# Red if ktally keeps using the node outside the primary component (it
# answers pings and SELECT @@...: a server that is up is not enough), or
# takes the failed COMMIT for a rollback when it landed elsewhere (counts
# differ). Needs `scripts/services start --mysql galera`; any broker.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/faults.sh"
source "$(dirname "$0")/ha.sh"

ha_need galera
t0=$SECONDS
ha_job gleave
not_ready() { kt_log_count_if '.event == "db-skip" and .reason == "not-ready"' "$@"; }
only_on() { [[ $(ha_writers "$db") == "$1" ]]; }

# 1. Between statements: node 1 is cut off. A second job, idle between
# batches 2 s apart, holds its connection to node 1 meanwhile: its next
# statement there is refused (1047, WSREP not ready).
idle_db=$(kt_db_name "$(kt_new_db gidle)")
idle_topic=$(kt_new_topic gidle 2)
kt_gen "$idle_topic" --lines 100 --seed "$KT_SEED" > /dev/null || fail "kt-gen failed"
kt_supervise idle run --brokers "$KT_BROKERS" --topic "$idle_topic" --db "$(ha_uri "$idle_db" 1 2 3)" \
  --mode "$KT_MODE" --interval 2 --log-format json
kt_wait_for 60 eval '(($(kt_commits "$WORK/idle.log") > 0))' || kt_sup_stuck idle "the idle job committed nothing"
w=$(ha_writer "$db")
[[ $w == 1 && $(ha_writers "$idle_db") == 1 ]] || fail "the jobs are not on node 1, the first of their list"
ha_isolate 1
kt_wait_for 30 eval '[[ $(ha_wsrep 1 wsrep_ready) == OFF ]]' || fail "node 1 still ready 30 s after it was cut off"
kt_wait_for 60 only_on 2 || kt_sup_stuck ktally "ktally did not move to node 2 while node 1 was out"
refused() { (($(kt_log_count_if '.event == "retry" and (.message | test("WSREP has not yet prepared node"))' "$WORK/idle.log") > 0)); }
kt_wait_for 30 refused || kt_sup_stuck idle "the idle job met no 1047 on node 1"
kt_wait_for 30 eval '[[ $(ha_writers "$idle_db") == 2 ]]' || kt_sup_stuck idle "the idle job did not move to node 2"
kt_sup_stop idle
[[ $(kt_sup_check idle) == 0 ]] || fail "the idle job exited by itself"
before=$(commits)
kt_wait_for 60 committed_since "$before" || kt_sup_stuck ktally "no commit on node 2"
(($(not_ready "$log") > 0)) || fail "no db-skip line said node 1 is not ready"
"$KTALLY" status --brokers "$KT_BROKERS" --topic "$topic" --db "$(ha_uri "$db" 1 2 3)" > "$WORK/status.out" \
  2> "$WORK/status.err" || { cat "$WORK/status.err" >&2; fail "ktally status failed while node 1 was out"; }
grep -q "database kt@127.0.0.1:$(ha_port 2)/$db" "$WORK/status.out" \
  || { cat "$WORK/status.out" >&2; fail "status does not name node 2, the server it read"; }
grep -q "is not ready: a Galera node outside the primary component" "$WORK/status.err" \
  || { cat "$WORK/status.err" >&2; fail "status did not say why it skipped node 1"; }
ha_join 1
cut1=$(ha_gap "$log")

# 2. While a COMMIT is in flight: node 3 frozen holds it, then node 2
# (the writer) is cut off, and node 3 thawed.
lost() { kt_log_count lost-commit "$log"; }
ha_in_commit "$db" "$log" ha_isolate
w=$HA_NODE
kt_wait_for 60 eval '[[ $(ha_wsrep $w wsrep_ready) == OFF ]]' || fail "node $w still ready"
kt_wait_for 90 committed_since "$(commits)" || kt_sup_stuck ktally "no commit after node $w left in a COMMIT"
kt_wait_for 30 ha_commit_failed "$log" \
  || { jq -Rr 'fromjson? | objects | select(.event == "retry") | .message' "$log" | tail -3 >&2
       fail "the COMMIT cut off on node $w was not taken for an unknown outcome"; }
ha_join "$w"

ha_job_end

errors=$(jq -Rr 'fromjson? | objects | select(.event == "retry") | .message' "$log" \
         | sed -n 's/.*on kt@[^:]*:[0-9]*\/[^:]*: \(.*\); retrying in.*/\1/p' | sort | uniq -c \
         | awk '{ $1 = $1 " x"; print }' | paste -sd, -)
outcome() { kt_log_count_if ".event == \"lost-commit\" and .outcome == \"$1\"" "$log"; }
note "$TEST_NAME ($KT_MODE): 2 writer nodes cut off (one in a COMMIT), $(not_ready "$log")" \
  "not-ready skips, moved $(kt_log_count db-server "$log") times; errors seen: ${errors:-none};" \
  "$(lost) COMMIT outcomes unknown ($(outcome landed) landed, $(outcome not-landed) did not);" \
  "longest wait between commits ${cut1} s then $(ha_gap "$log") s;" \
  "$(commits) commits, $(<"$WORK/feed.lines") lines, exact, $((SECONDS - t0)) s"
