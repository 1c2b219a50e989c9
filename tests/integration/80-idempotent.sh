#!/usr/bin/env bash
# --mode idempotent: kill -9 at random moments while data keeps arriving,
# restarting sometimes with another --max-per-partition; then a rewind of
# the stored offsets (ranges already processed are read and written again)
# and the same with --offsets kafka: error_log stays exact throughout.
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

KILLS=${KT_KILLS:-30}
db_uri=$(kt_new_db idem); db=$(kt_db_name "$db_uri")
topic=$(kt_new_topic idem 4)

kt_gen "$topic" --lines 120000 --seed 81 --rate 25000 --truth "$WORK/t1" > "$WORK/gen1" &
gen=$!; KT_CHILDREN+=("$gen")

sizes=(700 3000 15000 40000)
kills=0
while ((kills < KILLS)); do
  max=${sizes[$(kt_rand ${#sizes[@]})]}
  kt_kill9 30 400 "$WORK/run.log" "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" \
    --db "$db_uri" --mode idempotent --interval 0 --max-per-partition "$max" --log-format json \
    && kills=$((kills + 1))
done
wait "$gen" || fail "kt-gen failed"
messages=$(sed 's/.*messages=\([0-9]*\).*/\1/' "$WORK/gen1")

idle() {
  "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --mode idempotent \
    --interval 0 --exit-when-idle --log-format json "$@" 2>> "$WORK/run.log" \
    || { tail -20 "$WORK/run.log" >&2; fail "run $* failed"; }
}
idle --max-per-partition 5000
kt_check_counts "$db" "$WORK/t1"
[[ $(kt_offset_sum "$db" "$topic") == "$messages" ]] || fail "stored offsets do not add up to $messages"

# Replaying processed ranges: move every stored offset back to an earlier,
# unaligned offset and run again. Chunks are rewritten, never added twice.
kt_sql "$db" "UPDATE kafka_offset SET \`offset\` = FLOOR(\`offset\` / 3) + 17 WHERE job = '$topic'"
idle --max-per-partition 2500
kt_check_counts "$db" "$WORK/t1"
kt_sql "$db" "UPDATE kafka_offset SET \`offset\` = 0 WHERE job = '$topic'"
idle
kt_check_counts "$db" "$WORK/t1"

# Offsets in Kafka's consumer group instead of kafka_offset: a new job in a
# new database, killed a few times, then idle.
kdb_uri=$(kt_new_db idemk); kdb=$(kt_db_name "$kdb_uri")
for ((k = 0; k < 5; k++)); do
  kt_kill9 50 300 "$WORK/runk.log" "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" \
    --db "$kdb_uri" --mode idempotent --offsets kafka --job "k$RUN_ID" --interval 0 \
    --max-per-partition 3000 || true
done
"$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$kdb_uri" --mode idempotent \
  --offsets kafka --job "k$RUN_ID" --interval 0 --exit-when-idle 2>> "$WORK/runk.log" \
  || { tail -20 "$WORK/runk.log" >&2; fail "--offsets kafka run failed"; }
kt_check_counts "$kdb" "$WORK/t1"
[[ $(kt_sql "$kdb" "SELECT COUNT(*) FROM kafka_offset") == 0 ]] || fail "--offsets kafka wrote kafka_offset"

# A transactional job refuses the idempotent database, and the reverse.
rc=0; "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --exit-when-idle 2> "$WORK/mix.log" || rc=$?
[[ $rc == 2 ]] && grep -qE "idempotent-mode jobs|created with --mode 'idempotent'" "$WORK/mix.log" || fail "a transactional run on an idempotent database: exit $rc"

reread=$(kt_log_sum batch records "$WORK/run.log")

# One process while data trickles in, batch after batch: each goes on from
# the open chunk it remembers, so no record is read twice (before, every
# batch read its open chunks again from their start).
tdb_uri=$(kt_new_db idemtip); tdb=$(kt_db_name "$tdb_uri")
ttopic=$(kt_new_topic idemtip 3)
"$KTALLY" run --brokers "$KT_BROKERS" --topic "$ttopic" --db "$tdb_uri" --mode idempotent \
  --interval 0.1 --log-format json 2> "$WORK/tip.log" &
pid=$!; KT_CHILDREN+=("$pid")
# The data trickles in only once the job is up: a start slower than the
# whole trickle (ASan on a loaded machine) made it one batch (seed 68392).
started() { [[ $(kt_log_count start "$WORK/tip.log") -ge 1 ]]; }
kt_wait_for 60 started || { tail -5 "$WORK/tip.log" >&2; fail "the trickle job did not start"; }
kt_gen "$ttopic" --lines 30000 --seed 82 --rate 6000 --truth "$WORK/t3" > "$WORK/gen3" &
gen=$!; KT_CHILDREN+=("$gen")
wait "$gen" || fail "kt-gen failed"
tmessages=$(sed 's/.*messages=\([0-9]*\).*/\1/' "$WORK/gen3")
tip_done() { [[ $(kt_offset_sum "$tdb" "$ttopic") == "$tmessages" ]]; }
kt_wait_for 60 tip_done || fail "the trickle job did not reach $tmessages"
kt_stop "$pid" || fail "the trickle job did not stop cleanly"
kt_check_counts "$tdb" "$WORK/t3"
tbatches=$(kt_log_count batch "$WORK/tip.log")
tread=$(kt_log_sum batch records "$WORK/tip.log")
((tbatches > 5)) || fail "the trickle job committed only $tbatches batches"
[[ $tread == "$tmessages" ]] || fail "the trickle job read $tread records for $tmessages: open chunks were read again"
note "$TEST_NAME: $kills kills with 4 batch sizes, 2 rewinds, --offsets kafka, 120000 lines, exact; $reread records read for $messages (re-reading open chunks and rewinds); one process, $tbatches batches: $tread records read for $tmessages"
