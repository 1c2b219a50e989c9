#!/usr/bin/env bash
# run --exit-when-idle over a few hundred thousand lines in several
# partitions gives exactly the generator's per-minute truth, the stored
# offsets reach the high watermarks, and a second run changes nothing.
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

db_uri=$(kt_new_db exact); db=$(kt_db_name "$db_uri")
topic=$(kt_new_topic exact 8)

# Multi-line values (3 lines per record) and single-line ones, two seeds.
kt_gen "$topic" --lines 240000 --lines-per-value 3 --seed 11 --truth "$WORK/t1" > "$WORK/gen1"
kt_gen "$topic" --lines 60000 --seed 12 --truth "$WORK/t2" > "$WORK/gen2"
kt_sum_truths "$WORK/t1" "$WORK/t2" > "$WORK/truth"
messages=$(( $(sed 's/.*messages=\([0-9]*\).*/\1/' "$WORK/gen1") + $(sed 's/.*messages=\([0-9]*\).*/\1/' "$WORK/gen2") ))
malformed=$(( $(sed 's/.*malformed=\([0-9]*\).*/\1/' "$WORK/gen1") + $(sed 's/.*malformed=\([0-9]*\).*/\1/' "$WORK/gen2") ))

start=$(date +%s.%N)
"$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" \
  --exit-when-idle --interval 0 --log-format json 2> "$WORK/run1.log" || { cat "$WORK/run1.log" >&2; fail "first run failed"; }
end=$(date +%s.%N)
kt_check_counts "$db" "$WORK/truth"
kt_audit "$db_uri"
[[ $(kt_offset_sum "$db" "$topic") == "$messages" ]] || fail "stored offsets do not add up to $messages"
[[ $(kt_sql "$db" "SELECT COUNT(*) FROM kafka_offset") == 8 ]] || fail "expected 8 offset rows"

# The batch records report the malformed lines the generator wrote.
reported=$(kt_log_sum batch malformed "$WORK/run1.log")
[[ $reported == "$malformed" ]] || fail "reported $reported malformed lines, generated $malformed"

# A second run finds nothing new and changes nothing.
before=$(kt_sql "$db" "CHECKSUM TABLE error_log, kafka_offset")
"$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" \
  --exit-when-idle --interval 0 --log-format json 2> "$WORK/run2.log" || { cat "$WORK/run2.log" >&2; fail "second run failed"; }
[[ $(kt_sql "$db" "CHECKSUM TABLE error_log, kafka_offset") == "$before" ]] || fail "the second run changed the tables"
if kt_log_has batch "$WORK/run2.log"; then fail "the second run committed a batch"; fi

note "$TEST_NAME: 300000 lines, $messages records, exact; $(awk "BEGIN { printf \"%.0f\", 300000 / ($end - $start) }") lines/s end to end"
