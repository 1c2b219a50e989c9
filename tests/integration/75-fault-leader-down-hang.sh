#!/usr/bin/env bash
# A partition leader that stays down longer than ktally's Kafka timeout
# (10 s): the batch being planned gives up on it with a warning and is
# retried (no silent hang), and a SIGTERM that arrives while a batch waits
# for that leader still stops ktally within the interval.
#
# History: with librdkafka 2.0.2, rd_kafka_query_watermark_offsets()
# ignores its timeout while the leader is down (librdkafka #2588, fixed in
# 2.3.0 by #4460), so ktally once hung here, silent and deaf to SIGTERM,
# until the broker came back. Watermarks now come from
# rd_kafka_offsets_for_times(), which times out; but it blocks for the
# whole timeout, SIGTERM or not.
# broker: mock — pins each partition's leader to a broker and takes it down without the leadership moving (a real cluster elects another leader)
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/faults.sh"

interval=1
db_uri=$(kt_new_db fhang); db=$(kt_db_name "$db_uri")
topic=$(kt_new_topic fhang 3)
KT_FAULT_BROKERS=yes
for p in 0 1 2; do kt_ctl leader "$topic" "$p" $((p + 1)) > /dev/null || fail "cannot pin leaders"; done
kt_gen "$topic" --lines 3000 --seed "$KT_SEED" --truth "$WORK/t1" > "$WORK/gen1" || fail "kt-gen failed"

run_args=(run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --mode "$KT_MODE"
          --interval "$interval" --log-format json)
"$KTALLY" "${run_args[@]}" 2> "$WORK/run.log" &
pid=$!; KT_CHILDREN+=("$pid")
kt_wait_for 20 kt_log_has batch "$WORK/run.log" || fail "no first batch"

# Broker 1 leads partition 0: every batch plans it, so asks it for watermarks.
kt_ctl down 1 > /dev/null
down_at=$SECONDS
warned() { kt_log_match '.event == "retry" and .level == "warning"' "$WORK/run.log"; }
if ! kt_wait_for 16 warned; then
  kt_stacks "$pid" "leader down for 16 s"
  fail "ktally neither gave up nor warned in 16 s with a leader down (Kafka timeout 10 s)"
fi
warned_after=$((SECONDS - down_at))

# The retry (1 s later) waits for the same leader again: stop it there.
sleep 2.5
stop_at=$(kt_epoch)
kill -TERM "$pid"
stopped() { ! kill -0 "$pid" 2>/dev/null || [[ $(ps -o stat= -p "$pid") == Z* ]]; }
kt_wait_for 15 stopped || { kt_stacks "$pid" "SIGTERM with a leader down"; fail "no exit within 15 s of SIGTERM"; }
took=$(gawk -v a="$stop_at" -v b="$(kt_epoch)" 'BEGIN { printf "%.1f", b - a }')
kt_ctl up 1 > /dev/null
rc=0; wait "$pid" || rc=$?
((rc == 0)) || fail "exit $rc on SIGTERM, expected 0"
gawk -v t="$took" -v iv="$interval" 'BEGIN { exit !(t <= iv + 1) }' \
  || fail "SIGTERM took $took s to stop ktally while a batch waited for a leader that is down (interval $interval s)"

kt_fault_verify "$db" "$topic" "$WORK/t1" "$(kt_gen_messages "$WORK/gen1")" "${run_args[@]}"
note "$TEST_NAME: leader down: warned and retried after $warned_after s, SIGTERM honoured in $took s; exact"
