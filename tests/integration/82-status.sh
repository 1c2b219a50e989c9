#!/usr/bin/env bash
# ktally status: stored offsets, log start, high watermark, lag and data
# loss per partition match the broker's watermarks and kafka_offset,
# including a partition whose stored offset fell behind the log start.
source "$(dirname "$0")/lib.sh"

db_uri=$(kt_new_db status); db=$(kt_db_name "$db_uri")
topic=$(kt_new_topic status 3)
status() { "$KTALLY" status --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" "$@"; }

# Before any run: nothing stored, nothing created.
status --json > "$WORK/s0.json" 2> "$WORK/s0.err" || { cat "$WORK/s0.err" >&2; fail "status failed"; }
[[ $(kt_sql "$db" "SHOW TABLES" | wc -l) == 0 ]] || fail "status created tables"
grep -q '"stored": null' "$WORK/s0.json" || fail "no null stored offset before the first run"

kt_gen "$topic" --lines 3000 --lines-per-value 10 --seed 7 > /dev/null          # 100 records each
"$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --interval 0 --exit-when-idle 2> /dev/null
kt_gen "$topic" --lines 1500 --partition 0 --seed 8 > /dev/null                # 1500 more on partition 0
# Partition 2 loses data under its stored offset (100): ~12 MB more.
kt_gen "$topic" --lines 300000 --lines-per-value 50 --partition 2 --seed 9 > /dev/null

wm=$(kt_ctl watermarks "$topic")   # "ok 0:lo:hi 1:lo:hi 2:lo:hi"
status > "$WORK/s.txt"; status --json > "$WORK/s.json"
for entry in ${wm#ok }; do
  IFS=: read -r p lo hi <<< "$entry"
  stored=$(kt_sql "$db" "SELECT \`offset\` FROM kafka_offset WHERE job = '$topic' AND \`partition\` = $p")
  lag=$((hi - (stored > lo ? stored : lo)))
  line=$(awk -v p="$p" '$1 == p' "$WORK/s.txt")
  read -r sp sstored slo shi slag _ <<< "$line"
  [[ "$sstored $slo $shi $slag" == "$stored $lo $hi $lag" ]] \
    || fail "partition $p: status says '$line', expected stored $stored, log start $lo, high $hi, lag $lag"
  grep -q "{\"partition\": $p, \"stored\": $stored, \"log_start\": $lo, \"high_watermark\": $hi, \"lag\": $lag" "$WORK/s.json" \
    || fail "partition $p: the JSON does not match"
  if ((stored < lo)); then
    [[ $line == *"YES: [$stored, $lo) gone"* ]] || fail "partition $p: data loss not shown: $line"
    grep -q "\"partition\": $p, [^}]*\"data_lost\": true, \"lost_offsets\": $((lo - stored))}" "$WORK/s.json" \
      || fail "partition $p: data loss not in the JSON"
    shown_loss=$p
  fi
done
[[ ${shown_loss:-} == 2 ]] || fail "partition 2's data loss was not detected (watermarks: $wm)"
note "$TEST_NAME: 3 partitions match the broker and kafka_offset, data loss on partition 2 shown"
