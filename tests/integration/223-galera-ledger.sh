#!/usr/bin/env bash
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
# Galera, the ledger kind: two writers of one job (static shares, 0-1 and
# 2-3) on two different nodes apply transfers to the same accounts, which
# none of them has seen before: an unkeyed producer spreads every account
# over all partitions, so both writers create the same account rows at
# about the same time, on two nodes that do not lock across. A row created
# on both nodes is a certification conflict at COMMIT (a duplicate key
# across nodes), committed again, and the second time the row is there.
# Midway the node of one writer is killed (kill -9): it moves to node 1.
# Every balance and the set of applied transfers equal kt-ledger-gen's
# oracle, and `ktally audit` is clean.
#
# Red if an account created on both nodes started twice from 0 (a lost
# credit), a conflict lost its batch, or the moved writer applied a
# transfer twice. Transactional only: the ledger has no idempotent mode.
# Needs `scripts/services start --mysql galera`; any broker.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/faults.sh"
source "$(dirname "$0")/ha.sh"

ha_need galera
t0=$SECONDS
KT_LEDGER_GEN=$KT_BUILD/tests/support/kt-ledger-gen
db=$(kt_db_name "$(kt_new_db gledger)")
topic=$(kt_new_topic gledger 4)
"$KT_LEDGER_GEN" --brokers "$KT_BROKERS" --topic "$topic" --messages 30000 --accounts 3000 \
  --seed "$KT_SEED" --unkeyed --expect "$WORK/expect" > "$WORK/gen" || fail "kt-ledger-gen failed"
messages=30000

common=(run --kind ledger --workers 2 --brokers "$KT_BROKERS" --topic "$topic" --interval 0
        --max-per-partition 50 --log-format json)
kt_supervise a "${common[@]}" --db "$(ha_uri "$db" 2 1 3)" --partitions 0-1
# Once the first created the tables: DDL racing a commit on another node
# can wedge Galera (222-galera-two-writers).
kt_wait_for 60 eval '(($(kt_commits "$WORK/a.log") > 0))' || kt_sup_stuck a "no commit in 60 s"
kt_supervise b "${common[@]}" --db "$(ha_uri "$db" 3 1 2)" --partitions 2-3
on_two_nodes() { [[ $(ha_writers "$db" | paste -sd,) == 2,3 ]]; }
kt_wait_for 60 on_two_nodes || fail "the writers are not on nodes 2 and 3: $(ha_writers "$db" | paste -sd,)"
ha_use 1
half() { (($(kt_offset_sum "$db" "$topic") >= messages / 2)); }
kt_wait_for 120 half || kt_sup_stuck a "half the transfers not applied within 120 s"
ha_kill 3
moved() { [[ $(ha_writers "$db" | paste -sd,) == 1,2 ]]; }
kt_wait_for 60 moved || kt_sup_stuck b "writer b did not move to node 1 after node 3 died"
kt_wait_for 120 kt_offsets_reach "$db" "$topic" "$messages" \
  || kt_sup_stuck b "the writers did not apply every transfer within 120 s"
kt_sup_stop a
kt_sup_stop b
exits=$(($(kt_sup_check a | cut -d' ' -f1) + $(kt_sup_check b | cut -d' ' -f1)))
((exits == 0)) || fail "a writer exited by itself $exits times"
rejoin=$(ha_restart 3)

kt_sql "$db" "SELECT account, balance FROM account_balance" | LC_ALL=C sort > "$WORK/balances"
kt_sql "$db" "SELECT txn FROM ledger_applied" | LC_ALL=C sort > "$WORK/applied"
LC_ALL=C sort "$WORK/expect/balances.tsv" | diff -q "$WORK/balances" - > /dev/null \
  || { LC_ALL=C sort "$WORK/expect/balances.tsv" | diff "$WORK/balances" - | head >&2
       fail "balances differ from the oracle"; }
LC_ALL=C sort "$WORK/expect/applied.tsv" | diff -q "$WORK/applied" - > /dev/null \
  || fail "the applied transfers differ from the oracle"
kt_audit "$(ha_uri "$db" 1 2 3)"
conflicts=$(kt_log_count_if '.event == "commit-again"' "$WORK/a.log" "$WORK/b.log")
note "$TEST_NAME: $(wc -l < "$WORK/balances") accounts, $messages transfers on 4 partitions, two" \
  "writers on nodes 2 and 3, then 2 and 1: $conflicts commits again after a conflict," \
  "$(kt_log_count retry "$WORK/a.log" "$WORK/b.log") batches retried, node 3 rejoined in" \
  "$rejoin ms; every balance exact, $((SECONDS - t0)) s"
