#!/usr/bin/env bash
# A read that a cap stops early commits exactly what it read, and the next
# batch goes on from there: the byte cap (--max-batch-bytes), and the bound
# on records carried past their ranges (the queue's record cap,
# queued.min.messages), which keeps memory flat when some partitions hold
# far more than others. A skewed topic, both caps small, kill -9 meanwhile:
# the counts stay exact and the audit chain whole.
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

topic=$(kt_new_topic caps 4)
# Even over 4 partitions, then as much again into partition 0 alone.
kt_gen "$topic" --lines 40000 --seed 95 --truth "$WORK/t1" > "$WORK/gen1"
kt_gen "$topic" --lines 40000 --seed 96 --partition 0 --truth "$WORK/t2" > "$WORK/gen2"
kt_sum_truths "$WORK/t1" "$WORK/t2" > "$WORK/truth"

check() {  # check NAME CAP ARGS...: kill -9 a few times, then to idle
  local name=$1 cap=$2; shift 2
  local db_uri db k
  db_uri=$(kt_new_db "caps_$name"); db=$(kt_db_name "$db_uri")
  local run=(run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --interval 0 --verbose --log-format json "$@")
  for ((k = 0; k < 4; k++)); do
    kt_kill9 100 400 "$WORK/$name.log" "$KTALLY" "${run[@]}" || true
  done
  "$KTALLY" "${run[@]}" --exit-when-idle 2>> "$WORK/$name.log" \
    || { grep -v debug "$WORK/$name.log" | tail -5 >&2; fail "$name: the final run failed"; }
  kt_check_counts "$db" "$WORK/truth"
  kt_audit "$db_uri"
  [[ $(kt_offset_sum "$db" "$topic") == 80000 ]] || fail "$name: stored offsets do not add up to 80000"
  kt_log_match ".event == \"read-stopped\" and .cap == \"$cap\"" "$WORK/$name.log" \
    || fail "$name: the cap never stopped a read"
  note "$TEST_NAME: $name: exact, $(kt_log_count read-stopped "$WORK/$name.log") reads stopped early"
}

# 200 kB of values per batch at most.
check bytes bytes --max-batch-bytes 200000
# Partitions 1-3 are done after 2,000 records each while partition 0 has
# far more: what the fetcher brings for them meanwhile is carried, at most
# 1,000 records.
check carried carried --max-per-partition 2000 -X queued.min.messages=1000
