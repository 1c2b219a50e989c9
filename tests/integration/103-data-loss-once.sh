#!/usr/bin/env bash
# --on-data-loss skip on a running process: retention removes offsets under
# the stored one while ktally idles on the partition. The loss is logged and
# counted once per lost range, and no batch fails on the way (before: three
# DATA LOSS lines and 3 x the lost offsets in the metrics, with "cannot
# seek ... Erroneous state" and "offset vanished" failures in between).
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

for mode in transactional idempotent; do
  db_uri=$(kt_new_db "loss_once_$mode"); db=$(kt_db_name "$db_uri")
  topic=$(kt_new_trimmed_topic "loss_once_$mode" 1)
  kt_gen "$topic" --lines 20000 --lines-per-value 20 --seed 63 > /dev/null || fail "$mode: kt-gen failed"
  "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --interval 0.2 --max-per-partition 200 \
    --mode "$mode" --on-data-loss skip --http 127.0.0.1:0 --log-format json \
    2> "$WORK/run_$mode.log" &
  pid=$!; KT_CHILDREN+=("$pid")
  port=$(kt_http_port "$WORK/run_$mode.log") || { tail -5 "$WORK/run_$mode.log" >&2; fail "$mode: no --http port logged"; }
  at_end() { [[ $(kt_offset_sum "$db" "$topic" 2> /dev/null) == "$1" ]]; }
  kt_wait_for 30 at_end 1000 || { tail -20 "$WORK/run_$mode.log" >&2; fail "$mode: the first 1000 records were not committed"; }

  # ~12 MB more, while ktally reads: the partition keeps ~5 MB
  # (kt_new_trimmed_topic), so the log start overtakes the stored offset,
  # once or more.
  kt_gen "$topic" --lines 300000 --lines-per-value 50 --seed 64 > /dev/null || fail "$mode: kt-gen failed"
  wm=$(kt_watermarks "$topic")   # "0:lo:hi"
  high=${wm##*:}
  kt_wait_for 60 at_end "$high" || { tail -20 "$WORK/run_$mode.log" >&2; fail "$mode: the job did not reach $high"; }
  metrics=$(curl -sf "http://127.0.0.1:$port/metrics") || fail "$mode: no /metrics"
  kt_stop "$pid" || fail "$mode: ktally did not stop cleanly"

  # Each lost range once: a stored offset never starts two data-loss
  # records, and the metrics add up to the records.
  jq -Rr 'fromjson? | objects | select(.event == "data-loss") | "\(.from) \(.until)"' \
    "$WORK/run_$mode.log" > "$WORK/losses_$mode"
  events=$(wc -l < "$WORK/losses_$mode"); lost=$(awk '{ s += $2 - $1 } END { print s + 0 }' "$WORK/losses_$mode")
  ((events > 0)) || fail "$mode: no DATA LOSS line"
  [[ $(cut -d' ' -f1 "$WORK/losses_$mode" | sort | uniq -d) == "" ]] \
    || { grep "DATA LOSS" "$WORK/run_$mode.log" >&2; fail "$mode: one lost range was logged more than once"; }
  # (A broker's own hiccup under load may still retry a batch: not this.)
  jq -Rr 'fromjson? | objects | select(.event == "retry") | .message' "$WORK/run_$mode.log" \
    | grep -qiE "seek|retention|vanished|erroneous" \
    && { grep '"retry"' "$WORK/run_$mode.log" >&2; fail "$mode: a batch failed on the way"; }
  grep -q "^ktally_data_loss_total{[^}]*} $events$" <<< "$metrics" \
    || { grep data_lo <<< "$metrics" >&2; fail "$mode: ktally_data_loss_total is not $events"; }
  grep -q "^ktally_data_lost_offsets_total{[^}]*} $lost$" <<< "$metrics" \
    || { grep data_lo <<< "$metrics" >&2; fail "$mode: ktally_data_lost_offsets_total is not $lost"; }
  kt_audit "$db_uri"
  note "$TEST_NAME: $mode: $events lost range(s), $lost offsets, while running: each logged and counted once, no failed batch, audit OK"
done
