#!/usr/bin/env bash
# `reset` of a replay's job keeps it within its range: --to earliest
# --rebuild goes back to its --from (not the log start) and the replay run
# again counts its range once; --to latest and --shift-by stop at its
# --until (the plan says "stopped at the replay's --until"), after which
# the replay runs (exit 0) instead of failing on a "data loss" whose way
# out (--on-data-loss skip) replay does not take; an offset outside the
# range is refused in one line. A replay left outside its range by an
# older ktally is named by `audit` (exit 5) and by the replay itself (one
# line naming the way back), and `--to earliest --rebuild` heals it.
# Red before: the rebuild moved the replay to the log start and its rerun
# counted [0, 80) for a [40, 80) range (the table twice the truth), with
# `audit` OK; --to latest moved it to 120 and the replay then failed
# "rerun with --on-data-loss skip" (exit 4).
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

db_uri=$(kt_new_db reset_replay); db=$(kt_db_name "$db_uri")
topic=$(kt_new_topic reset_replay 2)
# Three phases of 40 records a partition (round robin): the replay's range
# is phase 2, [40, 80) of each.
kt_gen "$topic" --lines 80 --seed "$KT_SEED" --truth "$WORK/t1" > /dev/null
kt_gen "$topic" --lines 80 --seed $((KT_SEED + 1)) --start "2018-01-01 00:00:00" --truth "$WORK/t2" > /dev/null
kt_gen "$topic" --lines 80 --seed $((KT_SEED + 2)) --start "2019-01-01 00:00:00" --truth "$WORK/t3" > /dev/null
replay() {
  "$KTALLY" replay --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --table rp \
    --from 0:40,1:40 --until 0:80,1:80 "$@" 2>> "$WORK/replay.log"
}
replay || fail "the replay failed"
kt_check_counts "$db" "$WORK/t2" rp
job=$(kt_sql "$db" "SELECT job FROM ktally_job WHERE job LIKE 'replay.rp.%'")
[[ -n $job ]] || fail "no replay job"
reset() {  # reset ARGS...: the plan as JSON into $WORK/plan.json
  "$KTALLY" reset --brokers "$KT_BROKERS" --db "$db_uri" --job "$job" --json "$@" > "$WORK/plan.json" \
    2> "$WORK/reset.err" || { cat "$WORK/reset.err" >&2; fail "reset $* failed"; }
}
refused() {  # refused WHAT ARGS...: exit 2, one line saying WHAT
  local what=$1 rc=0; shift
  "$KTALLY" reset --brokers "$KT_BROKERS" --db "$db_uri" --job "$job" "$@" > "$WORK/out" 2> "$WORK/err" || rc=$?
  ((rc == 2)) && [[ $(grep -c . "$WORK/err") == 1 ]] && grep -qF -- "$what" "$WORK/err" \
    || { cat "$WORK/err" >&2; fail "reset $*: exit $rc, not refused saying '$what'"; }
}
news() { jq -r '[.partitions[].new] | map(tostring) | join(",")' "$WORK/plan.json"; }

# 1. A rebuild goes back to the replay's --from, and its rerun counts the range once.
reset --to earliest --rebuild --execute
[[ $(news) == 40,40 ]] || { cat "$WORK/plan.json" >&2; fail "--to earliest --rebuild of a replay went to $(news), not its --from"; }
replay || fail "the replay after the rebuild failed"
kt_check_counts "$db" "$WORK/t2" rp
kt_audit "$db_uri"

# 2. --to latest stops at its --until; the replay then runs and finishes.
reset --to earliest --rebuild --execute
reset --to latest --execute
[[ $(news) == 80,80 ]] && jq -e '[.partitions[] | .clamped and (.effect | contains("stopped at the replay'"'"'s --until"))] | all' \
  "$WORK/plan.json" > /dev/null || { cat "$WORK/plan.json" >&2; fail "--to latest of a replay went past its --until"; }
replay || fail "the replay after --to latest failed: $(tail -1 "$WORK/replay.log")"
[[ $(kt_sql "$db" "SELECT COUNT(*) FROM rp") == 0 ]] || fail "the skipped range was counted"
kt_audit "$db_uri"
reset --shift-by 1000
[[ $(news) == 80,80 ]] || fail "--shift-by 1000 went to $(news)"
refused "is outside replay $job's range of that partition, [40, 80]" --topic "$topic" --to 0:30 --execute
refused "is outside replay $job's range of that partition, [40, 80]" --topic "$topic" --to 1:81 --execute
reset --to earliest --rebuild --execute
replay || fail "the replay failed"
kt_check_counts "$db" "$WORK/t2" rp

# 3. A replay an older ktally left outside its range (its offsets moved
#    past --until, a batch counted there): audit and the replay say so.
kt_sql "$db" "UPDATE kafka_offset SET \`offset\` = 120 WHERE job = '$job' AND \`partition\` = 0;
              INSERT INTO ktally_batches (job, topic, \`partition\`, from_offset, until_offset, record_count,
                line_count, error_lines, malformed_lines, target, member)
              VALUES ('$job', '$topic', 0, 80, 120, 40, 40, 0, 0, 'rp', 'old-ktally')"
rc=0
"$KTALLY" audit --db "$db_uri" > "$WORK/audit.out" 2>&1 || rc=$?
((rc == 5)) && grep -qF "replay $job, $topic/0: batch [80, 120) is outside its range [40, 80)" "$WORK/audit.out" \
  || { cat "$WORK/audit.out" >&2; fail "audit did not name the batch outside the replay's range (exit $rc)"; }
rc=0
replay 2> "$WORK/err" || rc=$?
((rc == 2)) && tail -1 "$WORK/replay.log" | grep -qF "stands at 120, outside its range [40, 80]" \
  && ! tail -1 "$WORK/replay.log" | grep -q -- "--on-data-loss" \
  || { tail -3 "$WORK/replay.log" >&2; fail "the replay outside its range: exit $rc, not one line naming it"; }
reset --to earliest --rebuild --execute
[[ $(news) == 40,40 ]] || fail "the rebuild did not bring it back to its --from"
replay || fail "the replay after the rebuild failed"
kt_check_counts "$db" "$WORK/t2" rp
kt_audit "$db_uri"
