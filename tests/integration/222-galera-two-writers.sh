#!/usr/bin/env bash
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
# Galera: two writers of one job on two different nodes, each given the
# three nodes in its own order (node 2 first, node 3 first), while data
# keeps arriving: first two static shares (--partitions 0-1 and 2-3: their
# offsets never meet, their counts meet on the same minutes), then two
# members of a consumer group (partitions change hands at rebalances; the
# members are killed -9 at random and restarted). Galera does not lock
# across nodes: a row two nodes change at once is a certification conflict
# at COMMIT (1213, deadlock), which ktally commits again (still fenced: a
# writer that lost its partition meanwhile finds its offsets moved). The
# final table is exact, no batch lost or counted twice, in both phases
# (KT_MODE transactional or idempotent), and `ktally audit` is clean.
#
# Red if a certification conflict were taken for a failure that loses the
# batch, or a conflicting write slipped through (counts differ), or the
# writers did not meet on two nodes at all (the test checks where they
# write and that conflicts happened). Needs `scripts/services start
# --mysql galera`; any broker.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/faults.sh"
source "$(dirname "$0")/ha.sh"

ha_need galera
t0=$SECONDS
conflicts() { kt_log_count_if '.event == "commit-again" and (.message | test("Deadlock"))' "$@"; }
summary=()

for phase in shares group; do
  t1=$SECONDS
  db=$(kt_db_name "$(kt_new_db "g2$phase")")
  topic=$(kt_new_topic "g2$phase" 4)
  common=(run --brokers "$KT_BROKERS" --topic "$topic" --mode "$KT_MODE" --interval 0
          --max-per-partition 20 --log-format json)
  if [[ $phase == shares ]]; then
    a=(--partitions 0-1); b=(--partitions 2-3)
  else
    # The mock broker completes a rebalance only after session.timeout.ms - 1 s.
    a=(--group "g$RUN_ID" -X session.timeout.ms=6000 -X heartbeat.interval.ms=500); b=("${a[@]}")
  fi
  kt_feed_start "feed$phase" "$topic" 3000 3000
  kt_supervise "$phase.a" "${common[@]}" --db "$(ha_uri "$db" 2 1 3)" "${a[@]}"
  # The second writer once the first created the tables: DDL (TOI) on one
  # node while another commits can wedge MariaDB 10.11's Galera for good
  # (seen here: CREATE VIEW "Waiting to execute in isolation" on node 2,
  # the other writer's COMMIT "Waiting for certification" on node 3).
  kt_wait_for 60 eval '(($(kt_commits "$WORK/$phase.a.log") > 0))' \
    || kt_sup_stuck "$phase.a" "$phase: the first writer committed nothing in 60 s"
  kt_supervise "$phase.b" "${common[@]}" --db "$(ha_uri "$db" 3 1 2)" "${b[@]}"
  on_two_nodes() { [[ $(ha_writers "$db" | paste -sd,) == 2,3 ]]; }
  kt_wait_for 60 on_two_nodes || fail "$phase: the writers are not on nodes 2 and 3: $(ha_writers "$db" | paste -sd,)"
  have_conflict() { (($(conflicts "$WORK/$phase".?.log) > 0)); }
  kills=0
  if [[ $phase == group ]]; then
    for ((k = 0; k < 3; k++)); do
      kt_sleep_ms 1000 3000
      ab=ab; kt_sup_kill9 "$phase.${ab:$(kt_rand 2):1}"
      kills=$((kills + 1))
    done
  fi
  kt_wait_for 60 have_conflict || fail "$phase: no certification conflict in 60 s of two writers on two nodes"
  kt_feed_stop "feed$phase"
  messages=$(<"$WORK/feed$phase.messages")
  ha_use 1
  kt_wait_for 90 kt_offsets_reach "$db" "$topic" "$messages" \
    || { kt_sup_stuck "$phase.a" "$phase: the writers did not reach the end within 90 s"; }
  exits=0
  for w in a b; do
    kt_sup_stop "$phase.$w"
    e=$(kt_sup_check "$phase.$w"); exits=$((exits + ${e%% *}))
  done
  ((exits == 0)) || fail "$phase: a writer exited by itself $exits times"
  kt_fault_verify "$db" "$topic" "$WORK/feed$phase.truth" "$messages" "${common[@]}" \
    --db "$(ha_uri "$db" 1 2 3)" "${a[@]}"
  fenced=$(($(kt_log_count fenced "$WORK/$phase".?.log) + $(kt_log_count moved "$WORK/$phase".?.log)))
  summary+=("$phase: $(conflicts "$WORK/$phase".?.log) certification conflicts committed again, $fenced fenced, $kills kills, $(kt_commits "$WORK/$phase".?.log) commits, $(<"$WORK/feed$phase.lines") lines, exact, $((SECONDS - t1)) s")
done
note "$TEST_NAME ($KT_MODE): ${summary[0]}; ${summary[1]}; $((SECONDS - t0)) s in all"
