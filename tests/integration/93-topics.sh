#!/usr/bin/env bash
# Several topics in one job: --topic a,b counts both into error_log exactly,
# keeps offsets per topic and partition under the one job, survives kill -9,
# and an unknown topic among them stops it before any table is created.
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

db_uri=$(kt_new_db topics); db=$(kt_db_name "$db_uri")
a=$(kt_new_topic topics_a 3); b=$(kt_new_topic topics_b 2)
kt_gen "$a" --lines 30000 --seed 93 --truth "$WORK/ta" > /dev/null
kt_gen "$b" --lines 20000 --seed 94 --start "2017-08-01 10:00:00" --truth "$WORK/tb" > /dev/null
kt_sum_truths "$WORK/ta" "$WORK/tb" > "$WORK/truth"
run=(run --brokers "$KT_BROKERS" --topic "$a,$b" --job both --db "$db_uri" --interval 0
     --max-per-partition 1000)
for ((k = 0; k < 5; k++)); do
  kt_kill9 50 200 "$WORK/run.log" "$KTALLY" "${run[@]}" || true
done
"$KTALLY" "${run[@]}" --exit-when-idle 2>> "$WORK/run.log" || { tail "$WORK/run.log" >&2; fail "run failed"; }
kt_check_counts "$db" "$WORK/truth"
[[ $(kt_sql "$db" "SELECT COUNT(*) FROM kafka_offset WHERE job = 'both' AND topic = '$a'") == 3 ]] || fail "offsets of $a"
[[ $(kt_sql "$db" "SELECT COUNT(*) FROM kafka_offset WHERE job = 'both' AND topic = '$b'") == 2 ]] || fail "offsets of $b"
[[ $(kt_offset_sum "$db" both) == 50000 ]] || fail "offsets do not add up to 50000"
kt_audit "$db_uri"

# An unknown topic among them: exit 3, no table created.
db2_uri=$(kt_new_db topics2); db2=$(kt_db_name "$db2_uri")
ghost=$(kt_absent_topic ghost)
rc=0; "$KTALLY" run --brokers "$KT_BROKERS" --topic "$a,$ghost" --job j2 --db "$db2_uri" \
  --exit-when-idle 2> "$WORK/err" || rc=$?
[[ $rc == 3 ]] && grep -q "$ghost" "$WORK/err" || { cat "$WORK/err" >&2; fail "unknown topic: exit $rc"; }
[[ $(kt_sql "$db2" "SHOW TABLES" | wc -l) == 0 ]] || fail "a failed start created tables"
rc=0; "$KTALLY" run --brokers "$KT_BROKERS" --topic "$a,$b" --db "$db2_uri" 2> "$WORK/err" || rc=$?
[[ $rc == 2 ]] && grep -q -- "--job is required" "$WORK/err" || fail "several topics without --job: exit $rc"
note "$TEST_NAME: 2 topics in one job with kill -9: exact, offsets per topic and partition; unknown topic refused"
