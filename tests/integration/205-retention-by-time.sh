#!/usr/bin/env bash
# Retention by time deleting segments a job has not read (KT_MODE
# transactional or idempotent): records counted, then records written and
# left unread while retention.ms is lowered under them, the newest segment
# kept. A run stops with exit 4 and one line naming the partition and the
# exact lost range [stored offset, the broker's real log start), counting
# nothing; with --on-data-loss skip it counts exactly what is left, its
# data-loss events give that range and its size, `status` reports the
# loss, and `ktally audit` is clean. Red if a lost range is counted as
# read or misnamed, a run goes on without the flag, or a count is off.
# Retention by size: 60-data-loss and 103-data-loss-once in this tier.
# broker: apache — the broker deletes whole segments by their records' age on its own timer; the mock keeps a topic's last N bytes and knows no retention.ms
source "$(dirname "$0")/lib.sh"

mode=${KT_MODE:-transactional}
topic=$(kt_new_topic retention 2 --config segment.ms=1000 --config retention.ms=3600000)
db_uri=$(kt_new_db retention); db=$(kt_db_name "$db_uri")
run() {  # run ARGS...: a run to the end, stderr in $WORK/err; its exit status
  local rc=0
  "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --mode "$mode" \
    --interval 0 --exit-when-idle --log-format json "$@" 2> "$WORK/err" || rc=$?
  cat "$WORK/err" >> "$WORK/run.log"
  return "$rc"
}
high() { kt_watermarks "$topic" | tr ' ' '\n' | awk -F: -v p="$1" '$1 == p { print $3 }'; }

kt_gen "$topic" --lines 1000 --seed "$KT_SEED" --truth "$WORK/t1" > /dev/null || fail "kt-gen failed"
run || { cat "$WORK/err" >&2; fail "the first run failed"; }
kt_check_counts "$db" "$WORK/t1"
stored0=$(high 0); stored1=$(high 1)
# Unread, then older than the retention set below; the next records open a
# new segment (segment.ms), which stays.
kt_gen "$topic" --lines 1000 --seed $((KT_SEED + 1)) > /dev/null || fail "kt-gen failed"
lost0=$(high 0); lost1=$(high 1)
sleep 5
kt_gen "$topic" --lines 400 --seed $((KT_SEED + 2)) --truth "$WORK/t3" > /dev/null || fail "kt-gen failed"
# Retention takes the old segments (checked every second here), then is
# put back before the new one is as old.
kt_admin config "$topic" retention.ms=4000 || fail "cannot lower retention.ms"
trimmed() { (($(kt_log_start "$topic" 0) > stored0 && $(kt_log_start "$topic" 1) > stored1)); }
kt_wait_for 20 trimmed || fail "retention.ms=4000 deleted nothing within 20 s: $(kt_watermarks "$topic")"
kt_admin config "$topic" retention.ms=3600000 || fail "cannot raise retention.ms again"
low0=$(kt_log_start "$topic" 0); low1=$(kt_log_start "$topic" 1)
[[ "$low0 $low1" == "$lost0 $lost1" ]] \
  || fail "retention kept another range than the unread segments: log starts $low0 $low1, expected $lost0 $lost1"

rc=0; run || rc=$?
((rc == 4)) || { cat "$WORK/err" >&2; fail "a run over lost offsets exited $rc, not 4"; }
jq -Rr 'fromjson? | select(.level == "error" or .level == "warning") | .message' "$WORK/err" > "$WORK/lines"
[[ $(wc -l < "$WORK/lines") == 1 ]] || { cat "$WORK/lines" >&2; fail "not one line"; }
grep -qE "partition [01]: offsets \[($stored0, $low0|$stored1, $low1)\) were lost to retention before they were read" "$WORK/lines" \
  || { cat "$WORK/lines" >&2; fail "the line does not name the lost range [$stored0, $low0) or [$stored1, $low1)"; }
kt_check_counts "$db" "$WORK/t1"

run --on-data-loss skip || { cat "$WORK/err" >&2; fail "run --on-data-loss skip failed"; }
kt_sum_truths "$WORK/t1" "$WORK/t3" > "$WORK/truth"
kt_check_counts "$db" "$WORK/truth"
for p in 0 1; do
  from=$((p == 0 ? stored0 : stored1)) until=$((p == 0 ? low0 : low1))
  kt_log_match ".event == \"data-loss\" and .partition == $p and .from == $from and .until == $until and .offsets == $((until - from))" "$WORK/err" \
    || { grep data-loss "$WORK/err" >&2; fail "partition $p: no data-loss event for [$from, $until)"; }
done
[[ $(kt_log_count data-loss "$WORK/err") == 2 ]] || fail "not one data-loss event per partition"
[[ $(kt_offset_sum "$db" "$topic") == $(( $(high 0) + $(high 1) )) ]] || fail "the stored offsets are not at the ends"
kt_audit "$db_uri"
kt_admin delete "$topic"
