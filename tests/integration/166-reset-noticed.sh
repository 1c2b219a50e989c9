#!/usr/bin/env bash
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
# A reset or a forget applied while the job runs leaves a line in the
# job's own log: at its next batch, the service finds its stored offsets
# where it did not leave them, and says who moved them (an offsets-moved
# event): `reset --to latest` forward (the audit row of the skip names
# reset-PID@host), `reset --to 0:N` back (only a reset moves back), and
# `forget` (the row is gone: the job starts again afresh). Another writer's
# batch is not such news. Red before: the service's log said nothing of
# any of them. The mock broker: Kafka's part is the watermarks only.
source "$(dirname "$0")/lib.sh"

db_uri=$(kt_new_db noticed); db=$(kt_db_name "$db_uri")
topic=$(kt_new_topic noticed 2)
kt_gen "$topic" --lines 6000 --seed "$KT_SEED" > /dev/null
"$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --mode idempotent \
  --max-per-partition 40 --interval 0.3 --log-format json 2> "$WORK/run.log" &
pid=$!; KT_CHILDREN+=("$pid")
reset() { "$KTALLY" reset --brokers "$KT_BROKERS" --db "$db_uri" --job "$topic" "$@"; }
offset() { kt_sql "$db" "SELECT \`offset\` FROM kafka_offset WHERE job = '$topic' AND \`partition\` = $1"; }
moved() {  # moved CONDITION: an offsets-moved record of this job meets the jq CONDITION
  kt_log_match ".event == \"offsets-moved\" and .job == \"$topic\" and .topic == \"$topic\" and ($1)" "$WORK/run.log"
}
started() { [[ -n $(offset 0 2> /dev/null) ]] && (($(offset 0) > 0)); }
kt_wait_for 30 started || { tail -5 "$WORK/run.log" >&2; fail "the job did not start"; }

# Forward, while the job is far behind (40 offsets a batch).
reset --to latest --execute --json > "$WORK/fwd.json" 2> "$WORK/reset.log" \
  || { cat "$WORK/reset.log" >&2; fail "reset --to latest failed"; }
read -r from0 to0 < <(jq -r '.partitions[] | select(.partition == 0) | "\(.stored) \(.new)"' "$WORK/fwd.json")
((to0 > from0)) || fail "the forward reset moved nothing on partition 0 ($from0 -> $to0)"
kt_wait_for 20 moved ".partition == 0 and .from == $from0 and .to == $to0 and .by == \"reset\"
                      and (.member | startswith(\"reset-\"))" \
  || { grep offsets-moved "$WORK/run.log" >&2; fail "the job did not say reset moved 0 from $from0 to $to0"; }

# Back, to an offset it counted already (idempotent: counted once).
reset --to 0:100 --execute > /dev/null 2>> "$WORK/reset.log" || { cat "$WORK/reset.log" >&2; fail "reset --to 0:100 failed"; }
kt_wait_for 20 moved ".partition == 0 and .to == 100 and .from > 100 and .by == \"reset\"" \
  || { grep offsets-moved "$WORK/run.log" >&2; fail "the job did not say reset moved 0 back to 100"; }
kt_log_match '.event == "offsets-moved" and (.message | test("moved back from [0-9]+ to 100 while the job ran, by `ktally reset`: reading on from 100$"))' \
  "$WORK/run.log" || fail "the line for people does not say it"

# Forgotten: the rows are gone; the job starts again as new.
caught_up() { (($(kt_offset_sum "$db" "$topic") == 6000)); }
kt_wait_for 60 caught_up || fail "the job did not catch up"
n=$(kt_log_count offsets-moved "$WORK/run.log")
"$KTALLY" forget --db "$db_uri" --job "$topic" --execute > "$WORK/forget.out" 2>&1 \
  || { cat "$WORK/forget.out" >&2; fail "forget failed"; }
kt_wait_for 20 moved '.by == "forget" and .from > 0' \
  || { tail -5 "$WORK/run.log" >&2; fail "the job did not say it was forgotten"; }
kt_log_match '.event == "offsets-moved" and .by == "forget" and .level == "warning"' "$WORK/run.log" \
  || fail "a forget under a running job is not a warning"
kt_stop "$pid" || fail "exit $? on SIGTERM"
# Only what moved said so: the job's own batches are not news.
(($(kt_log_count offsets-moved "$WORK/run.log") <= n + 2)) || fail "more offsets-moved records than moves: $(grep -c offsets-moved "$WORK/run.log")"
note "$TEST_NAME: a forward reset, a rewind and a forget under a running job each said in its log"
