#!/usr/bin/env bash
# --kind ledger (seed 000): per-account balances from JSON transactions,
# one account per worker, duplicates skipped, overdrafts rejected. With
# --workers 1, 2 and 8, kill -9 at random moments and restarts, ktally's
# balances, applied set and rejections equal an oracle that applies the
# produced messages in (partition, offset) order. Keyed producers (debits
# that overdraw: order matters) and unkeyed ones (an account on several
# partitions: credits only, since order across partitions is not defined).
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

KT_LEDGER_GEN=$KT_BUILD/tests/support/kt-ledger-gen
check_ledger() {  # check_ledger DB EXPECT_DIR
  kt_sql "$1" "SELECT account, balance FROM account_balance ORDER BY account" > "$WORK/b.tsv"
  kt_sql "$1" "SELECT txn FROM ledger_applied ORDER BY txn" > "$WORK/a.tsv"
  kt_sql "$1" "SELECT txn, reason FROM ledger_rejected ORDER BY txn" > "$WORK/r.tsv"
  for t in b:balances a:applied r:rejected; do
    LC_ALL=C sort "$WORK/${t%%:*}.tsv" > "$WORK/got" ; LC_ALL=C sort "$2/${t#*:}.tsv" > "$WORK/want"
    diff -q "$WORK/got" "$WORK/want" > /dev/null \
      || { diff "$WORK/got" "$WORK/want" | head >&2; fail "$1: ${t#*:} differ from the oracle"; }
  done
}

for mode in keyed unkeyed; do
  topic=$(kt_new_topic "ledger_$mode" 6)
  flags=(); [[ $mode == unkeyed ]] && flags=(--unkeyed)
  "$KT_LEDGER_GEN" --brokers "$KT_BROKERS" --topic "$topic" --messages 20000 --accounts 60 \
    --seed 8 "${flags[@]}" --expect "$WORK/expect_$mode" > "$WORK/gen_$mode" || fail "kt-ledger-gen failed"
  read -r counts < "$WORK/gen_$mode"
  for workers in 1 2 8; do
    db_uri=$(kt_new_db "ledger_${mode}_$workers"); db=$(kt_db_name "$db_uri")
    run=(run --kind ledger --workers "$workers" --brokers "$KT_BROKERS" --topic "$topic"
         --db "$db_uri" --interval 0 --max-per-partition 400 --log-format json)
    kills=0
    for ((k = 0; k < 8; k++)); do
      kt_kill9 50 300 "$WORK/run_${mode}_$workers.log" "$KTALLY" "${run[@]}" && kills=$((kills + 1))
    done
    "$KTALLY" "${run[@]}" --exit-when-idle 2>> "$WORK/run_${mode}_$workers.log" \
      || { tail -20 "$WORK/run_${mode}_$workers.log" >&2; fail "$mode, $workers workers: final run failed"; }
    check_ledger "$db" "$WORK/expect_$mode"
    kt_audit "$db_uri"
    [[ $(kt_offset_sum "$db" "$topic") == 20000 ]] || fail "$mode, $workers workers: offsets short of 20000"
    kt_log_match '.event == "sample" and .what == "bad ledger message"' "$WORK/run_${mode}_$workers.log" \
      || fail "no bad message sampled"
  done
  note "$TEST_NAME: $mode: $counts; workers 1, 2, 8 with kill -9 each equal the oracle"
done

# Throughput, informative: 100,000 transactions, 1 and 2 workers.
topic=$(kt_new_topic ledger_speed 8)
"$KT_LEDGER_GEN" --brokers "$KT_BROKERS" --topic "$topic" --messages 100000 --accounts 5000 \
  --seed 9 --bad 0 > /dev/null || fail "kt-ledger-gen failed"
for workers in 1 2; do
  db_uri=$(kt_new_db "ledger_speed_$workers")
  start=$(date +%s.%N)
  "$KTALLY" run --kind ledger --workers "$workers" --brokers "$KT_BROKERS" --topic "$topic" \
    --db "$db_uri" --interval 0 --exit-when-idle 2> "$WORK/speed_$workers.log" || fail "speed run failed"
  end=$(date +%s.%N)
  note "$TEST_NAME: 100000 transactions, --workers $workers: $(awk "BEGIN { printf \"%.0f\", 100000 / ($end - $start) }") transactions/s end to end"
done
