#!/usr/bin/env bash
# kill -9 of ktally at random moments (KT_KILLS, default 30, at least), in
# small back-to-back batches while two generators keep producing; a
# supervisor restarts it each time. In the end every line is counted
# exactly once: a batch commits whole (counts and offsets) or not at all.
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/faults.sh"

KILLS=${KT_KILLS:-30}
db_uri=$(kt_new_db fkill); db=$(kt_db_name "$db_uri")
topic=$(kt_new_topic fkill 6)
s1=$((KT_SEED * 2 + 1)) s2=$((KT_SEED * 2 + 2))

# Data arrives during the whole kill phase: single-line and 3-line values.
kt_gen "$topic" --lines 100000 --seed "$s1" --rate 9000 --truth "$WORK/t1" > "$WORK/gen1" &
gen1=$!; KT_CHILDREN+=("$gen1")
kt_gen "$topic" --lines 60000 --seed "$s2" --rate 5000 --lines-per-value 3 \
  --start "2017-07-30 14:20:00" --truth "$WORK/t2" > "$WORK/gen2" &
gen2=$!; KT_CHILDREN+=("$gen2")

run_args=(run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --mode "$KT_MODE"
          --interval 0 --max-per-partition 300 --log-format json)
t0=$SECONDS
kt_supervise ktally "${run_args[@]}"
# Each kill lands 20..700 ms into the life of the process: from start-up
# (Kafka metadata, MySQL connect, schema) to several batches in.
while (($(kt_sup_count ktally 137) < KILLS)) || kill -0 "$gen1" 2>/dev/null \
      || kill -0 "$gen2" 2>/dev/null; do
  kt_sleep_ms 20 700
  kt_sup_kill9 ktally
done
wait "$gen1" || fail "kt-gen (seed $s1) failed"
wait "$gen2" || fail "kt-gen (seed $s2) failed"
kills=$(kt_sup_count ktally 137)
messages=$(kt_gen_messages "$WORK/gen1" "$WORK/gen2")
kt_sum_truths "$WORK/t1" "$WORK/t2" > "$WORK/truth"

# The last one, left alone, catches up by itself.
kt_wait_for 60 kt_offsets_reach "$db" "$topic" "$messages" \
  || kt_sup_stuck ktally "after $kills kills, ktally did not reach the end within 60 s"
kt_sup_stop ktally
exits=$(kt_sup_check ktally)
kt_fault_verify "$db" "$topic" "$WORK/truth" "$messages" "${run_args[@]}"

note "$TEST_NAME: $kills kills (kill -9; $(kt_lives_with_commits "$WORK/ktally.log") processes had committed)," \
  "$exits other exits, $(kt_commits "$WORK/ktally.log") commits," \
  "160000 lines ($messages records), exact, $((SECONDS - t0)) s"
