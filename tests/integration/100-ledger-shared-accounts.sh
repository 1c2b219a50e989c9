#!/usr/bin/env bash
# Ledger, several writers that create the same accounts: an unkeyed producer
# spreads every account over all partitions (credits only, so the result
# does not depend on how the writers interleave), and two static shares
# (--partitions) plus a --topic a,b job apply them at the same time. Before
# account rows were created race-free, two writers that both found an
# account absent started from 0 and the second overwrote the first.
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

KT_LEDGER_GEN=$KT_BUILD/tests/support/kt-ledger-gen
check_ledger() {  # check_ledger DB EXPECT_DIR
  kt_sql "$1" "SELECT account, balance FROM account_balance ORDER BY account" > "$WORK/b.tsv"
  kt_sql "$1" "SELECT txn FROM ledger_applied ORDER BY txn" > "$WORK/a.tsv"
  for t in b:balances a:applied; do
    LC_ALL=C sort "$WORK/${t%%:*}.tsv" > "$WORK/got"; LC_ALL=C sort "$2/${t#*:}.tsv" > "$WORK/want"
    diff -q "$WORK/got" "$WORK/want" > /dev/null \
      || { diff "$WORK/got" "$WORK/want" | head >&2; fail "$1: ${t#*:} differ from the oracle ($(diff "$WORK/got" "$WORK/want" | grep -c '^<') rows)"; }
  done
}

topic=$(kt_new_topic ledger_shared 4)
"$KT_LEDGER_GEN" --brokers "$KT_BROKERS" --topic "$topic" --messages 20000 --accounts 5000 \
  --seed "$KT_SEED" --unkeyed --expect "$WORK/expect" > "$WORK/gen" || fail "kt-ledger-gen failed"

# Two static shares at once, small batches so that they interleave often.
db_uri=$(kt_new_db ledger_shared); db=$(kt_db_name "$db_uri")
pids=()
for share in 0-1 2-3; do
  "$KTALLY" run --kind ledger --workers 2 --brokers "$KT_BROKERS" --topic "$topic" \
    --db "$db_uri" --partitions "$share" --interval 0 --max-per-partition 200 \
    --exit-when-idle 2>> "$WORK/run.log" &
  pids+=($!); KT_CHILDREN+=($!)
done
for pid in "${pids[@]}"; do
  wait "$pid" || { grep -v " info: " "$WORK/run.log" | tail -20 >&2; fail "a share failed"; }
done
check_ledger "$db" "$WORK/expect"
kt_audit "$db_uri"

# One job over two topics: one runner per topic, the same accounts on both.
topic2=$(kt_new_topic ledger_shared2 4)
"$KT_LEDGER_GEN" --brokers "$KT_BROKERS" --topic "$topic2" --messages 20000 --accounts 5000 \
  --seed "$((KT_SEED + 1))" --unkeyed --expect "$WORK/expect2" > "$WORK/gen2" || fail "kt-ledger-gen failed"
db_uri=$(kt_new_db ledger_shared_t); db=$(kt_db_name "$db_uri")
"$KTALLY" run --kind ledger --brokers "$KT_BROKERS" --topic "$topic,$topic2" --job "two$RUN_ID" \
  --db "$db_uri" --interval 0 --max-per-partition 200 --exit-when-idle 2>> "$WORK/run2.log" \
  || { tail -20 "$WORK/run2.log" >&2; fail "the two-topic job failed"; }
# Both generators' oracles together: credits only, so balances add.
mkdir -p "$WORK/both"
cat "$WORK/expect/balances.tsv" "$WORK/expect2/balances.tsv" \
  | awk -F'\t' '{ split($2, p, "."); c[$1] += p[1] * 10000 + p[2] } END { for (a in c) printf "%s\t%d.%04d\n", a, c[a] / 10000, c[a] % 10000 }' \
  > "$WORK/both/balances.tsv"
cat "$WORK/expect/applied.tsv" "$WORK/expect2/applied.tsv" > "$WORK/both/applied.tsv"
check_ledger "$db" "$WORK/both"
note "$TEST_NAME: 5000 accounts on 4 partitions, two shares and two topics at once: balances exact"
