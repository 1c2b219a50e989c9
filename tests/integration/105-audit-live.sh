#!/usr/bin/env bash
# `ktally audit` on a live job never reports a break that is not there: it
# reads batches, offsets, covered sets and totals in one snapshot. Before,
# it read them one after the other, and a commit in between made a healthy
# job BROKEN (exit 5): about 1 run in 40 ("batches end at 2177 but the
# stored offset is 2203").
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

AUDITS=${KT_AUDITS:-60}
for mode in transactional idempotent; do
  db_uri=$(kt_new_db "audit_live_$mode")
  topic=$(kt_new_topic "audit_live_$mode" 8)
  "$KT_GEN" --brokers "$KT_BROKERS" --topic "$topic" --lines 400000 --rate 40000 --seed 75 > /dev/null &
  gen=$!; KT_CHILDREN+=("$gen")
  "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --mode "$mode" \
    --interval 0 --max-per-partition 50 2> "$WORK/run_$mode.log" &
  pid=$!; KT_CHILDREN+=("$pid")
  has_batches() { [[ $(kt_sql "$(kt_db_name "$db_uri")" "SELECT COUNT(*) FROM ktally_batches" 2> /dev/null) -gt 0 ]]; }
  kt_wait_for 30 has_batches || fail "$mode: no batch committed"
  broken=0
  for ((i = 0; i < AUDITS; i++)); do
    "$KTALLY" audit --db "$db_uri" > "$WORK/audit.out" 2>&1 || { broken=$((broken + 1)); cat "$WORK/audit.out" >&2; }
  done
  kt_stop "$pid" || fail "$mode: ktally did not stop cleanly"
  kill "$gen" 2> /dev/null || true
  ((broken == 0)) || fail "$mode: $broken of $AUDITS audits of a healthy live job said BROKEN"
done
note "$TEST_NAME: $AUDITS audits of a live job in each mode, all OK"
