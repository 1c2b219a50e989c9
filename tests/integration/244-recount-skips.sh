#!/usr/bin/env bash
# A recount (`reset --rebuild` of a range) never counts what an earlier
# forward reset skipped: the skip's audit row is marked (ktally_batches.skipped),
# the recount starts after the last skip in its way, and the plan says so
# (`kept_skipped`, "stays skipped"). A moment inside the skipped range,
# one before it, and one with nothing counted after the skip (it stays)
# are tried; then `run --audit-keep` folds the old rows around the skip,
# never across it, and a recount through the folded rows still works.
# Red before: a recount inside the skip moved the job to the skip's start
# and the skipped records were counted (error_log = A+B+C, not A+C); after
# --audit-keep folded the skip into the counted rows, the recount read the
# folded range again, found more records than recorded, and was refused
# for good "records removed by compaction? another ktally's parser?".
# The by-time path of the same rule: 241-recount-last-hour.
# broker: any — the recount here is by offset (the mock cannot look offsets up by time)
source "$(dirname "$0")/lib.sh"

db_uri=$(kt_new_db recount_skips); db=$(kt_db_name "$db_uri")
topic=$(kt_new_topic recount_skips 2)
run() {
  "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --interval 0 --exit-when-idle \
    --max-per-partition 60 "$@" 2>> "$WORK/run.log" || { tail -3 "$WORK/run.log" >&2; fail "a run failed"; }
}
reset() {  # reset ARGS...: the plan as JSON in $WORK/plan.json
  "$KTALLY" reset --brokers "$KT_BROKERS" --db "$db_uri" --job "$topic" --json "$@" > "$WORK/plan.json" \
    2> "$WORK/reset.err" || { cat "$WORK/reset.err" >&2; fail "reset $* failed"; }
}
stored() { kt_sql "$db" "SELECT \`offset\` FROM kafka_offset WHERE job = '$topic' AND \`partition\` = $1"; }

# A counted, B skipped by a reset, C counted.
kt_gen "$topic" --lines 400 --seed "$KT_SEED" --truth "$WORK/a" > /dev/null
run
a0=$(stored 0); a1=$(stored 1)
kt_gen "$topic" --lines 400 --seed $((KT_SEED + 1)) --start "2018-01-01 00:00:00" --truth "$WORK/b" > /dev/null
reset --to latest --execute
b0=$(stored 0); b1=$(stored 1)
((b0 > a0 && b1 > a1)) || fail "the reset skipped nothing: $a0,$a1 -> $b0,$b1"
[[ $(kt_sql "$db" "SELECT COUNT(*) FROM ktally_batches WHERE job = '$topic' AND skipped") == 2 ]] \
  || fail "the skips are not marked: $(kt_sql "$db" "SELECT * FROM ktally_batches WHERE record_count = 0")"
kt_gen "$topic" --lines 400 --seed $((KT_SEED + 2)) --start "2019-01-01 00:00:00" --truth "$WORK/c" > /dev/null
run
kt_sum_truths "$WORK/a" "$WORK/c" > "$WORK/want"
kt_check_counts "$db" "$WORK/want"

kept="[[$a0, $b0], [$a1, $b1]]"  # the last skip of each partition
recount() {  # recount P0 P1 WHAT: a recount from those offsets keeps the last skip
  reset --topic "$topic" --to "0:$1,1:$2" --rebuild --execute
  run
  kt_check_counts "$db" "$WORK/want"
  jq -e --argjson kept "$kept" \
    '.partitions | map(select(.move == "recount")) | length == 2 and
     (map(.kept_skipped) == $kept) and (map(.new) == ($kept | map(.[1])))' \
    "$WORK/plan.json" > /dev/null || { cat "$WORK/plan.json" >&2; fail "$3: the recount does not start after the skip"; }
  jq -e '.partitions[0].effect | contains("stays skipped")' "$WORK/plan.json" > /dev/null \
    || fail "$3: the plan does not say the skip stays"
  kt_audit "$db_uri"
}
recount $(((a0 + b0) / 2)) $(((a1 + b1) / 2)) "a moment inside the skip"
recount $((a0 / 2)) $((a1 / 2)) "a moment before the skip"

# --audit-keep folds the old rows around the skips, never across one.
skips=$(kt_sql "$db" "SELECT COUNT(*) FROM ktally_batches WHERE job = '$topic' AND skipped")
rows=$(kt_sql "$db" "SELECT COUNT(*) FROM ktally_batches WHERE job = '$topic'")
sleep 1.1
kt_gen "$topic" --lines 200 --seed $((KT_SEED + 3)) --start "2020-01-01 00:00:00" --truth "$WORK/d" > /dev/null
run --audit-keep 1s
kt_sum_truths "$WORK/a" "$WORK/c" "$WORK/d" > "$WORK/want"
kt_check_counts "$db" "$WORK/want"
[[ $(kt_sql "$db" "SELECT COUNT(*) FROM ktally_batches WHERE job = '$topic' AND skipped") == "$skips" ]] \
  || fail "--audit-keep folded skips away: $(kt_sql "$db" "SELECT * FROM ktally_batches WHERE job = '$topic'")"
(($(kt_sql "$db" "SELECT COUNT(*) FROM ktally_batches WHERE job = '$topic'") < rows)) || fail "--audit-keep folded nothing"
kt_audit "$db_uri"
recount $((a0 / 2)) $((a1 / 2)) "after --audit-keep"
reset --topic "$topic" --to "0:$((b0 + 1)),1:$((b1 + 1))" --rebuild --execute  # C's folded rows
jq -e --argjson b0 "$b0" --argjson b1 "$b1" '([.partitions[] | .move == "recount" and
     .kept_skipped == null] | all) and ([.partitions[].new] == [$b0, $b1])' "$WORK/plan.json" > /dev/null \
  || { cat "$WORK/plan.json" >&2; fail "a recount inside the folded rows after the skip: not from their start"; }
run
kt_check_counts "$db" "$WORK/want"
kt_audit "$db_uri"

# Nothing counted after a skip: the recount has nothing to do there.
e0=$(stored 0); e1=$(stored 1)
kt_gen "$topic" --lines 100 --seed $((KT_SEED + 4)) --start "2021-01-01 00:00:00" > /dev/null
reset --to latest --execute
kept="[[$e0, $(stored 0)], [$e1, $(stored 1)]]"
reset --topic "$topic" --to "0:$(( $(stored 0) - 1 )),1:$(( $(stored 1) - 1 ))" --rebuild
jq -e --argjson kept "$kept" '([.partitions[] | .move == "stays"] | all) and
     ([.partitions[].kept_skipped] == $kept)' "$WORK/plan.json" > /dev/null \
  || { cat "$WORK/plan.json" >&2; fail "a recount inside a skip at the end does not stay"; }

