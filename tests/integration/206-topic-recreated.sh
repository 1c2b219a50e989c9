#!/usr/bin/env bash
# A topic deleted and created again under the same name while a job's
# offsets are stored (KT_MODE transactional or idempotent), its new log
# shorter than the stored offsets: a run stops with exit 4 and one line
# naming the partition, the stored offset and the new log's end, counting
# nothing; with --on-data-loss skip, a transactional job counts the new
# log from its start (exact), says so in one warning without a negative
# count, and `ktally audit` accepts the skip's audit row; an idempotent job
# refuses the skip (exit 4, one line naming `ktally forget`: its covered
# offsets would hide the new log's records), and once forgotten counts the
# new log exactly; audit rows folded by --audit-keep keep the chain whole
# across the skip. Red before: the idempotent skip counted nothing of the
# new log and exited 0; the warning said "-900 offsets never counted";
# the audit called the transactional chain BROKEN ("the batches end at
# 1000 but the stored offset is 100"), and again once folded (the fold
# took the lowest and highest offsets: [0, 1000)).
# A recreated topic whose new log has already grown past the stored
# offsets: 216-topic-recreated-past-offsets (the anchors).
# broker: apache — topics deleted and created again under the same name; the mock cannot delete a topic
source "$(dirname "$0")/lib.sh"

mode=${KT_MODE:-transactional}
topic=$(kt_new_topic recreated 2)
db_uri=$(kt_new_db recreated); db=$(kt_db_name "$db_uri")
run() {  # run ARGS...: a run to the end, its stderr in $WORK/err; its exit status
  local rc=0
  "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --mode "$mode" \
    --interval 0 --exit-when-idle --log-format json "$@" 2> "$WORK/err" || rc=$?
  cat "$WORK/err" >> "$WORK/run.log"
  return "$rc"
}
refused() {  # refused WHAT ARGS...: exit 4, one error (no warning) saying WHAT, nothing counted
  local what=$1 rc=0; shift
  run "$@" || rc=$?
  ((rc == 4)) || { cat "$WORK/err" >&2; fail "run $* exited $rc, not 4"; }
  jq -Rr 'fromjson? | select(.level == "error" or .level == "warning") | .message' "$WORK/err" > "$WORK/lines"
  [[ $(wc -l < "$WORK/lines") == 1 ]] || { cat "$WORK/err" >&2; fail "run $*: not one line"; }
  grep -qF -- "$what" "$WORK/lines" || { cat "$WORK/lines" >&2; fail "run $*: does not say '$what'"; }
  kt_check_counts "$db" "$WORK/t1"
  [[ $(kt_offset_sum "$db" "$topic") == 2000 ]] || fail "run $* moved the stored offsets"
}

kt_gen "$topic" --lines 2000 --seed "$KT_SEED" --truth "$WORK/t1" > /dev/null || fail "kt-gen failed"
run || { cat "$WORK/err" >&2; fail "the first run failed"; }
kt_check_counts "$db" "$WORK/t1"

kt_admin delete "$topic" || fail "cannot delete $topic"
kt_admin create "$topic" 2 > /dev/null || fail "cannot create $topic again"
kt_gen "$topic" --lines 200 --seed $((KT_SEED + 1)) --truth "$WORK/t2" > /dev/null || fail "kt-gen failed"
[[ $(kt_watermarks "$topic") == "0:0:100 1:0:100" ]] || fail "the new topic: $(kt_watermarks "$topic")"

refused "stored offset 1000 is beyond the high watermark 100 (topic recreated or truncated?)"
grep -qF "partition 0" "$WORK/lines" || fail "the line names no partition: $(cat "$WORK/lines")"
kt_sum_truths "$WORK/t1" "$WORK/t2" > "$WORK/truth"
if [[ $mode == idempotent ]]; then
  refused "\`ktally forget --job $topic --execute\`" --on-data-loss skip
  "$KTALLY" forget --db "$db_uri" --job "$topic" --execute > /dev/null 2>&1 || fail "forget failed"
  run || { cat "$WORK/err" >&2; fail "the run after forget failed"; }
else
  run --on-data-loss skip || { cat "$WORK/err" >&2; fail "run --on-data-loss skip failed"; }
  [[ $(kt_log_count data-loss "$WORK/err") == 2 ]] || { cat "$WORK/err" >&2; fail "not one data-loss warning per partition"; }
  kt_log_match '.event == "data-loss" and .offsets < 0' "$WORK/err" && fail "a data-loss event counts negative offsets"
  grep -q -- "-[0-9]* offsets" "$WORK/err" && fail "the warning counts negative offsets: $(grep -o -- '-[0-9]* offsets' "$WORK/err" | head -1)"
  kt_log_match '.event == "data-loss" and (.message | contains("the stored offset 1000 is beyond the log'"'"'s end 100 (topic recreated or truncated?): continuing from the log start"))' "$WORK/err" \
    || { cat "$WORK/err" >&2; fail "the warning does not say the stored offset is beyond the log's end"; }
fi
kt_check_counts "$db" "$WORK/truth"
[[ $(kt_offset_sum "$db" "$topic") == 200 ]] || fail "the stored offsets are not at the new log's end: $(kt_offset_sum "$db" "$topic")"
kt_audit "$db_uri"
# More data: the job goes on from the new log's end; its audit rows
# folded (--audit-keep) keep the chain whole across the skip.
kt_gen "$topic" --lines 100 --seed $((KT_SEED + 2)) --truth "$WORK/t3" > /dev/null || fail "kt-gen failed"
sleep 1
run --audit-keep 1s || { cat "$WORK/err" >&2; fail "the run after the recreation failed"; }
(($(kt_sql "$db" "SELECT COUNT(*) FROM ktally_batches WHERE job = '$topic'") <= 4)) \
  || fail "--audit-keep 1s did not fold the audit rows"
kt_sum_truths "$WORK/t1" "$WORK/t2" "$WORK/t3" > "$WORK/truth"
kt_check_counts "$db" "$WORK/truth"
kt_audit "$db_uri"
kt_admin delete "$topic"
