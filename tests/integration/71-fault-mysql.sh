#!/usr/bin/env bash
# MariaDB killed (kill -9) and restarted on the same datadir and port mid-run
# (KT_RESTARTS, default 6, at least), while ktally commits many tiny
# batches back to back, so that some kills land inside a transaction or
# its COMMIT. ktally must ride it out by itself (it retries with backoff);
# if it exits all the same, the supervisor restarts it and the exit is
# reported (a non-zero status other than data loss is tolerated). A COMMIT
# whose answer was lost must be resolved from the stored offsets, and the
# counts stay exact.
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/faults.sh"

RESTARTS=${KT_RESTARTS:-6}
MAX_RESTARTS=${KT_MAX_RESTARTS:-12}
db_uri=$(kt_new_db fmysql); db=$(kt_db_name "$db_uri")
topic=$(kt_new_topic fmysql 2)
s1=$((KT_SEED * 2 + 1)) s2=$((KT_SEED * 2 + 2))

# A backlog that lasts the whole run (ktally is MySQL-bound on it), and
# more arriving meanwhile.
kt_gen "$topic" --lines 120000 --seed "$s1" --truth "$WORK/t1" > "$WORK/gen1" \
  || fail "kt-gen (seed $s1) failed"
kt_gen "$topic" --lines 40000 --seed "$s2" --rate 2500 --lines-per-value 2 \
  --start "2017-07-30 15:00:00" --truth "$WORK/t2" > "$WORK/gen2" &
gen2=$!; KT_CHILDREN+=("$gen2")

# Tiny batches make a kill during COMMIT likely. Idempotent batches (two
# transactions each) get somewhat bigger ones; a COMMIT whose answer is lost
# needs no resolving there.
if [[ $KT_MODE == transactional ]]; then per_partition=5; else per_partition=50 MAX_RESTARTS=$RESTARTS; fi
run_args=(run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --mode "$KT_MODE"
          --interval 0 --max-per-partition "$per_partition" --log-format json)
commits() { kt_commits "$WORK/ktally.log"; }
# A commit since BEFORE, or nothing left to commit: all the data is in and
# committed (seen in idempotent mode: it caught up before the 6th restart,
# and the test then waited for a commit with nothing to commit). Idle
# batches still read MySQL, so the restarts still hit something.
progressed_since() {
  (($(commits) > $1)) || { [[ -s $WORK/gen2 ]] &&
    kt_offsets_reach "$db" "$topic" "$(kt_gen_messages "$WORK/gen1" "$WORK/gen2")"; }
}

t0=$SECONDS
kt_supervise ktally "${run_args[@]}"
KT_FAULT_MYSQL=yes
restarts=0 down_ms=0
lost() { kt_log_sum retry lost_commit "$WORK/ktally.log"; }
backlog() { (($(kt_offset_sum "$db" "$topic") < backlog_end)); }
backlog_end=$(($(kt_gen_messages "$WORK/gen1") - 10000))
# At least RESTARTS, and on until one kill has hit a COMMIT (while tiny
# batches still have a backlog to work through).
while ((restarts < RESTARTS)) || { (($(lost) == 0 && restarts < MAX_RESTARTS)) && backlog; }; do
  # Only once ktally commits again (its backoff reset), and at a random
  # moment of its stream of transactions.
  before=$(commits)
  kt_wait_for 40 progressed_since "$before" \
    || kt_sup_stuck ktally "no commit within 40 s after MariaDB restart $restarts"
  kt_sleep_ms 30 900
  start=$(date +%s%N)
  "$KT_SERVICES" restart-mysql > "$WORK/restart.out" 2>&1 \
    || { cat "$WORK/restart.out" >&2; fail "scripts/services restart-mysql failed"; }
  down_ms=$((down_ms + ($(date +%s%N) - start) / 1000000))
  restarts=$((restarts + 1))
done
wait "$gen2" || fail "kt-gen (seed $s2) failed"
messages=$(kt_gen_messages "$WORK/gen1" "$WORK/gen2")
kt_sum_truths "$WORK/t1" "$WORK/t2" > "$WORK/truth"

kt_wait_for 60 kt_offsets_reach "$db" "$topic" "$messages" \
  || kt_sup_stuck ktally "ktally did not reach the end within 60 s of the last MariaDB restart"
kt_sup_stop ktally
exits=$(kt_sup_check ktally); n_exits=${exits%% *}
kt_fault_verify "$db" "$topic" "$WORK/truth" "$messages" "${run_args[@]}"

log=$WORK/ktally.log
lost=$(lost)
outcome() { jq -Rn --arg o "$1" '[inputs | fromjson? | objects | select(.event == "lost-commit" and .outcome == $o)] | length' "$log"; }
landed=$(outcome landed)
not_landed=$(outcome not-landed)
retries=$(kt_log_count retry "$log")
# Every lost answer is resolved by the same process, unless it exited
# before its next batch planned.
((landed + not_landed <= lost)) || fail "more commit resolutions ($((landed + not_landed))) than lost answers ($lost)"
# Where the kills landed, as ktally saw them (words for people: a note).
hits=$(jq -Rr 'fromjson? | objects | select(.event == "retry") | .message' "$log" \
       | sed -n 's/^job [^:]*: \(.*\) on kt@[^:]*:[0-9]*\/[^:]*: \(.*\); retrying in.*/\1: \2/p' \
       | sed 's/the answer to COMMIT was lost.*/COMMIT/; s/^cannot //; s/: Lost connection to server during query$//' \
       | sort | uniq -c \
       | awk '{ $1 = $1 " x"; print }' | paste -sd, -)
note "ktally's view of the kills: ${hits:-none}"
if ((n_exits > 0)); then note "ktally exits while MariaDB restarted:"; kt_sup_exit_reasons ktally | sed 's/^/#   /'; fi
note "$TEST_NAME: $restarts MariaDB kill -9 + restarts (${down_ms} ms down in all), $retries retried batches," \
  "$lost COMMIT answers lost ($landed landed, $not_landed did not), ktally exits: $exits," \
  "$(commits) commits, 160000 lines ($messages records), exact, $((SECONDS - t0)) s"
