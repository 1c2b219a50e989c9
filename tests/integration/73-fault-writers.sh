#!/usr/bin/env bash
# Two, then three ktally processes on the same job at once, each under its
# own supervisor, killed (kill -9) and restarted at random while data keeps
# arriving. The fenced offset updates let exactly one writer commit each
# range: the counts stay exact, and the losers say "fenced".
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/faults.sh"

KILLS=${KT_KILLS:-20}  # per round
summary=()
t0=$SECONDS
for writers in 2 3; do
  t1=$SECONDS
  db_uri=$(kt_new_db fwriters$writers); db=$(kt_db_name "$db_uri")
  topic=$(kt_new_topic fwriters$writers 4)
  seed=$((KT_SEED * 10 + writers))
  kt_gen "$topic" --lines 40000 --seed "$seed" --truth "$WORK/t$writers" > "$WORK/gen$writers" \
    || fail "kt-gen (seed $seed) failed"
  run_args=(run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --mode "$KT_MODE"
            --interval 0 --max-per-partition 400 --log-format json)

  for ((w = 0; w < writers; w++)); do kt_supervise "w$writers.$w" "${run_args[@]}"; done
  kt_feed_start "feed$writers" "$topic" 3000 6000
  for ((k = 0; k < KILLS; k++)); do
    kt_sleep_ms 50 800
    kt_sup_kill9 "w$writers.$(kt_rand "$writers")"
  done
  kt_feed_stop "feed$writers"
  messages=$(($(kt_gen_messages "$WORK/gen$writers") + $(<"$WORK/feed$writers.messages")))
  lines=$((40000 + $(<"$WORK/feed$writers.lines")))
  kt_sum_truths "$WORK/t$writers" "$WORK/feed$writers.truth" > "$WORK/truth$writers"

  kt_wait_for 60 kt_offsets_reach "$db" "$topic" "$messages" \
    || { for ((w = 0; w < writers; w++)); do pid=$(kt_sup_pid "w$writers.$w") && kt_stacks "$pid" "w$writers.$w"; done
         fail "$writers writers did not reach the end within 60 s"; }
  kills=0 exits=0
  for ((w = 0; w < writers; w++)); do
    kt_sup_stop "w$writers.$w"
    kills=$((kills + $(kt_sup_count "w$writers.$w" 137)))
    e=$(kt_sup_check "w$writers.$w"); exits=$((exits + ${e%% *}))
  done
  kt_fault_verify "$db" "$topic" "$WORK/truth$writers" "$messages" "${run_args[@]}"
  # Transactional: fenced, rolled back; idempotent: moved, its output stands.
  fenced=$(($(kt_log_count fenced "$WORK"/w$writers.*.log) + $(kt_log_count moved "$WORK"/w$writers.*.log)))
  retried=$(kt_log_count commit-again "$WORK"/w$writers.*.log)
  commits=$(kt_commits "$WORK"/w$writers.*.log)
  ((commits > 0)) || fail "no commit"
  summary+=("$writers writers: $kills kills, $exits other exits, $commits commits, $fenced fenced batches, $retried commits retried after a deadlock, $lines lines, exact, $((SECONDS - t1)) s")
done
note "$TEST_NAME: ${summary[0]}; ${summary[1]}; $((SECONDS - t0)) s in all"
