#!/usr/bin/env bash
# Two and three `run` processes on the same job at once: the fenced offset
# updates let exactly one commit each range, so the counts stay exact.
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

offsets_reach() { [[ $(kt_offset_sum "$1" "$2") == "$3" ]]; }

for writers in 2 3; do
  db_uri=$(kt_new_db writers$writers); db=$(kt_db_name "$db_uri")
  topic=$(kt_new_topic writers$writers 4)
  kt_gen "$topic" --lines 120000 --seed 3$writers --rate 60000 --truth "$WORK/t$writers" > "$WORK/gen$writers" &
  gen=$!; KT_CHILDREN+=("$gen")

  pids=()
  for ((w = 0; w < writers; w++)); do
    "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" \
      --interval 0 --max-per-partition 500 --log-format json 2> "$WORK/w$writers.$w.log" &
    pids+=($!); KT_CHILDREN+=($!)
  done
  wait "$gen" || fail "kt-gen failed"
  messages=$(sed 's/.*messages=\([0-9]*\).*/\1/' "$WORK/gen$writers")
  kt_wait_for 60 offsets_reach "$db" "$topic" "$messages" \
    || fail "$writers writers did not reach the end within 60 s"
  for pid in "${pids[@]}"; do
    kt_stop "$pid" || fail "a writer did not exit 0 on SIGTERM"
  done
  kt_check_counts "$db" "$WORK/t$writers"
  kt_audit "$db_uri"
  fenced=$(kt_log_count fenced "$WORK"/w$writers.*.log)
  note "$TEST_NAME: $writers writers, 120000 lines, exact, $fenced fenced batches"
done
