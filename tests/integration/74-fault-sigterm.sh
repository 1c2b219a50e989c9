#!/usr/bin/env bash
# SIGTERM while a batch is in flight, again and again (KT_SIGNALS, default
# 10, in flight): ktally exits 0 within the interval, and leaves nothing
# partial behind (the final counts are exact after a last run).
#
# ktally reads ~2M lines/s, and the mock keeps only ~5 MB per partition:
# no batch of real data lasts long enough to be hit on purpose. So every
# request to the brokers is made slow (ctl rtt), which makes each batch
# (watermarks, fetches) last about the interval: a signal at a random
# moment lands in flight: every other signal aims at the first batch of a
# fresh process, the others at its second (one batch committed before).
# Whether each landed in flight is then read from the log: the batch
# records say when each batch ended and how long it took.
# broker: mock — slows every broker with the mock's rtt, which a real broker cannot be told
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/faults.sh"

SIGNALS=${KT_SIGNALS:-10}
MAX_CYCLES=${KT_MAX_CYCLES:-30}
interval=2 rtt=100
db_uri=$(kt_new_db fterm); db=$(kt_db_name "$db_uri")
topic=$(kt_new_topic fterm 4)
run_args=(run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --mode "$KT_MODE"
          --interval "$interval" --max-per-partition 2000 --log-format json)

chunks=0 messages=0 lines=0
top_up() {  # one more chunk of data, with its truth
  chunks=$((chunks + 1))
  kt_gen "$topic" --lines 40000 --seed $((KT_SEED * 100 + chunks)) --lines-per-value $((1 + chunks % 2)) \
    --truth "$WORK/c$chunks.truth" > "$WORK/c$chunks.gen" || fail "kt-gen (chunk $chunks) failed"
  messages=$((messages + $(kt_gen_messages "$WORK/c$chunks.gen")))
  lines=$((lines + 40000))
}
backlog() { echo $((messages - $(kt_offset_sum "$db" "$topic" 2>/dev/null || echo 0))); }

# events LOG: its start and batch records as "EPOCH EVENT TURN DURATION" (the
# turn of the loop: 1 for the first batch of the process).
events() {
  jq -Rr 'fromjson? | objects | select(.event == "start" or .event == "batch")
          | (.time | capture("^(?<s>.*)\\.(?<ms>[0-9]+)Z$")) as $t
          | "\(($t.s + "Z" | fromdateiso8601) + ($t.ms | tonumber) / 1000) \(.event) \(.turn // 0) \(.duration // 0)"' "$1"
}

# in_flight LOG EPOCH: whether a batch was running at EPOCH, from the log
# of that process: the next batch after the last one logged starts at once
# (it took longer than the interval) or an interval after that one began;
# the first starts once start-up says so (the start record).
in_flight() {
  events "$1" | gawk -v ts="$2" -v iv="$interval" '
    $1 > ts { exit }
    $2 == "start" { next_start = $1 }
    $2 == "batch" { dur = $4 + 0; next_start = dur >= iv ? $1 : $1 - dur + iv }
    END { exit !(next_start > 0 && ts >= next_start) }'
}

gone() { ! kill -0 "$1" 2>/dev/null || [[ $(ps -o stat= -p "$1") == Z* ]]; }

top_up; top_up
KT_FAULT_BROKERS=yes
kt_ctl rtt -1 "$rtt" > /dev/null || fail "cannot slow the brokers down"
t0=$SECONDS
cycles=0 inflight=0 idle=0 worst=0
while ((inflight < SIGNALS)); do
  ((cycles < MAX_CYCLES)) || fail "only $inflight of $cycles SIGTERMs landed while a batch was in flight"
  cycles=$((cycles + 1))
  (($(backlog) >= 20000)) || top_up
  log=$WORK/run$cycles.log
  "$KTALLY" "${run_args[@]}" 2> "$log" &
  pid=$!; KT_CHILDREN+=("$pid")
  kt_wait_for 20 kt_log_has start "$log" || fail "cycle $cycles: ktally did not start within 20 s"
  if ((cycles % 2)); then
    kt_sleep_ms 50 700  # into the first batch (~1 s: connections, assignment)
  else
    # Into the second, which begins an interval after the first began.
    first() { events "$log" | grep -q '^[0-9.]* batch 1 '; }
    kt_wait_for 20 first || fail "cycle $cycles: no first batch within 20 s"
    # The second one is short (~2 rtt of watermarks): aim at its start,
    # from the first one's record (when it ended, how long it took).
    sleep "$(events "$log" | gawk -v now="$(kt_epoch)" -v iv="$interval" -v r="$(kt_rand 120)" '
               $2 == "batch" && $3 == 1 {
                 end = $1; d = $4 + 0
                 w = (d >= iv ? end : end - d + iv) + (20 + r) / 1000 - now
                 printf "%.3f", (w > 0 ? w : 0); exit }')"
  fi
  ts=$(kt_epoch)
  kill -TERM "$pid"
  if ! kt_wait_for $((interval + 10)) gone "$pid"; then
    kt_stacks "$pid" "cycle $cycles"
    tail -5 "$log" >&2; fail "cycle $cycles: ktally did not stop within $((interval + 10)) s of SIGTERM"
  fi
  rc=0; wait "$pid" || rc=$?
  took=$(gawk -v a="$ts" -v b="$(kt_epoch)" 'BEGIN { printf "%d", (b - a) * 1000 }')
  ((rc == 0)) || { tail -5 "$log" >&2; fail "cycle $cycles: exit $rc on SIGTERM, expected 0"; }
  ((took <= interval * 1000)) || { tail -5 "$log" >&2; fail "cycle $cycles: took $took ms to stop (interval $interval s)"; }
  ((took > worst)) && worst=$took
  if in_flight "$log" "$ts"; then inflight=$((inflight + 1)) where="in flight"; else idle=$((idle + 1)) where="between batches"; fi
  echo "cycle $cycles: SIGTERM at $(date -d "@$ts" '+%T.%3N') $where, exit after $took ms" >> "$WORK/signals.txt"
  cat "$log" >> "$WORK/all.log"
  # Nothing partial right now, either: error_log holds exactly the ERROR
  # lines of the batches that said they committed (transactional mode
  # only: idempotent batches re-read their chunk and report it again).
  if [[ $KT_MODE == transactional ]]; then
    said=$(kt_log_sum batch errors "$WORK/all.log")
    have=$(kt_sql "$db" "SELECT COALESCE(SUM(log_count), 0) FROM error_log")
    [[ $have == "$said" ]] || fail "cycle $cycles: error_log holds $have ERROR lines, the committed batches $said"
  fi
done
kt_ctl rtt -1 0 > /dev/null || fail "cannot restore the brokers' rtt"

kt_sum_truths "$WORK"/c*.truth > "$WORK/truth"
kt_fault_verify "$db" "$topic" "$WORK/truth" "$messages" "${run_args[@]}"
note "$TEST_NAME: $cycles SIGTERMs ($inflight with a batch in flight, $idle between batches), each exit 0," \
  "slowest exit $worst ms (interval $interval s), $(kt_commits "$WORK/all.log") commits before them," \
  "$lines lines ($messages records), exact, $((SECONDS - t0)) s"
