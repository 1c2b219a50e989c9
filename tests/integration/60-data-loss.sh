#!/usr/bin/env bash
# Data lost to retention under a stored offset: the default stops with a
# clear error naming the partition and the lost range (exit 4);
# --on-data-loss skip goes on from the log start and reports that range.
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

db_uri=$(kt_new_db loss); db=$(kt_db_name "$db_uri")
topic=$(kt_new_trimmed_topic loss 1)
run=(run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --interval 0 --exit-when-idle)

kt_gen "$topic" --lines 20000 --lines-per-value 20 --seed 61 --truth "$WORK/t1" > "$WORK/gen1"
"$KTALLY" "${run[@]}" 2> "$WORK/run1.log" || fail "first run failed"
stored=$(kt_offset_sum "$db" "$topic")
[[ $stored == 1000 ]] || fail "expected offset 1000 after the first run, got $stored"

# ~12 MB more: the partition keeps ~5 MB (kt_new_trimmed_topic), so the
# log start moves well past the stored offset.
kt_gen "$topic" --lines 300000 --lines-per-value 50 --seed 62 > "$WORK/gen2"
low=$(kt_wait_trimmed "$topic" 0 "$stored")

rc=0; "$KTALLY" "${run[@]}" 2> "$WORK/run2.log" || rc=$?
[[ $rc == 4 ]] || { cat "$WORK/run2.log" >&2; fail "exit $rc on data loss, expected 4"; }
grep -q "ktally: topic $topic, partition 0: offsets \[$stored, $low) were lost to retention" "$WORK/run2.log" \
  || { cat "$WORK/run2.log" >&2; fail "the error does not name the lost range [$stored, $low)"; }
[[ $(kt_offset_sum "$db" "$topic") == "$stored" ]] || fail "the failed run moved the offset"

"$KTALLY" "${run[@]}" --on-data-loss skip --log-format json 2> "$WORK/run3.log" \
  || { cat "$WORK/run3.log" >&2; fail "skip run failed"; }
kt_log_match ".event == \"data-loss\" and .topic == \"$topic\" and .partition == 0
              and .from == $stored and .until == $low and .offsets == $((low - stored))" "$WORK/run3.log" \
  || { cat "$WORK/run3.log" >&2; fail "the skip run does not report the lost range"; }
[[ $(kt_offset_sum "$db" "$topic") == 7000 ]] || fail "the skip run did not reach the high watermark 7000"

# What survived, counted by a fresh job that starts at the log start,
# plus what the first run counted, is what error_log must hold.
ref_uri=$(kt_new_db lossref); ref=$(kt_db_name "$ref_uri")
"$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$ref_uri" --interval 0 --exit-when-idle 2> "$WORK/ref.log" \
  || fail "reference run failed"
kt_sql "$ref" "SELECT log_time, log_count FROM error_log" > "$WORK/survived"
kt_sum_truths "$WORK/t1" "$WORK/survived" > "$WORK/truth"
kt_check_counts "$db" "$WORK/truth"
note "$TEST_NAME: lost [$stored, $low) detected (exit 4), skipped and reported; exact for what survived"
