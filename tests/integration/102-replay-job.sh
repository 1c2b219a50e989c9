#!/usr/bin/env bash
# A replay keeps its offsets apart from every live job, and one range is one
# replay however it is spelled:
#  - `replay --job LIVE` read from the live job's stored offset and moved it,
#    so the live job later skipped records; now its state is "replay.LIVE"
#    and the live job's offsets are untouched (and `run --job replay.x` is
#    refused: those names are replay's);
#  - the replay's own job name hashed the raw --from/--until text, so
#    "0:0,1:0" and "1:0,0:00" counted the range twice, and two table names
#    sharing their first 40 characters shared one job.
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

db_uri=$(kt_new_db replay_job); db=$(kt_db_name "$db_uri")
topic=$(kt_new_topic replay_job 2)
kt_gen "$topic" --lines 4000 --partitions 2 --seed 21 --truth "$WORK/t1" > "$WORK/g1" || fail "kt-gen failed"
run() { "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --interval 0 \
          --exit-when-idle "$@" 2>> "$WORK/run.log" || { tail -5 "$WORK/run.log" >&2; fail "run failed"; }; }
replay() { "$KTALLY" replay --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" "$@" 2>> "$WORK/replay.log" \
             || { tail -5 "$WORK/replay.log" >&2; fail "replay $* failed"; }; }
run
high=$(kt_offset_sum "$db" "$topic")
before=$(kt_sql "$db" "SELECT \`partition\`, \`offset\` FROM kafka_offset WHERE job = '$topic' ORDER BY 1")

# 1. A replay named after the live job never touches its offsets.
replay --job "$topic" --from 0:0 --until 0:10 --table mine
[[ $(kt_sql "$db" "SELECT \`partition\`, \`offset\` FROM kafka_offset WHERE job = '$topic' ORDER BY 1") == "$before" ]] \
  || fail "replay --job $topic moved the live job's offsets"
[[ $(kt_sql "$db" "SELECT COUNT(*) FROM kafka_offset WHERE job = 'replay.$topic'") == 1 ]] \
  || fail "the replay's offsets are not under replay.$topic"
kt_gen "$topic" --lines 2000 --partitions 2 --seed 22 --start "2019-01-01 00:00:00" --truth "$WORK/t2" > /dev/null || fail "kt-gen failed"
run
kt_sum_truths "$WORK/t1" "$WORK/t2" > "$WORK/t12"
kt_check_counts "$db" "$WORK/t12"
rc=0; "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --job replay.x --exit-when-idle 2> "$WORK/err" || rc=$?
[[ $rc == 2 && $(wc -l < "$WORK/err") == 1 ]] && grep -q "belong to \`ktally replay\`" "$WORK/err" \
  || { cat "$WORK/err" >&2; fail "run --job replay.x: exit $rc"; }

# 2. One range, three spellings: counted once.
p0=$(kt_sql "$db" "SELECT \`offset\` FROM kafka_offset WHERE job = '$topic' AND \`partition\` = 0")
p1=$(kt_sql "$db" "SELECT \`offset\` FROM kafka_offset WHERE job = '$topic' AND \`partition\` = 1")
replay --from 0:0,1:0 --until "0:$p0,1:$p1"
replay --from 1:0,0:0 --until "1:$p1,0:$p0"
replay --from 0:00,1:000 --until "0:0$p0,1:$p1"
kt_check_counts "$db" "$WORK/t12" error_log_replay

# 3. Two table names that share their first 40 characters are two replays.
long=t_0123456789012345678901234567890123456789
replay --from 0:0,1:0 --until "0:$p0,1:$p1" --table "${long}_a"
replay --from 0:0,1:0 --until "0:$p0,1:$p1" --table "${long}_b"
kt_check_counts "$db" "$WORK/t12" "${long}_a"
kt_check_counts "$db" "$WORK/t12" "${long}_b"

# 4. A named replay is its range too: the same --job with another range is
# refused before anything is read (before, it resumed from the first
# range's offsets: part of the new range never counted, or exit 4 where
# the first range ended past the second's end); the same range in another
# spelling resumes it and finds it done.
replay --job named --from 0:0 --until "0:$p0" --table named_t
before=$(kt_sql "$db" "CHECKSUM TABLE named_t, kafka_offset")
rc=0; "$KTALLY" replay --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --job named \
  --from 0:1,1:0 --until "0:$p0,1:$p1" --table named_t 2> "$WORK/err" || rc=$?
[[ $rc == 2 && $(wc -l < "$WORK/err") == 1 ]] \
  && grep -q "job replay.named was created with --from/--until '0:0-$p0', and this run gives '0:1-$p0,1:0-$p1'" "$WORK/err" \
  || { cat "$WORK/err" >&2; fail "replay --job named with another range: exit $rc"; }
[[ $(kt_sql "$db" "CHECKSUM TABLE named_t, kafka_offset") == "$before" ]] || fail "the refused replay changed something"
replay --job named --from 0:000 --until "0:0$p0" --table named_t
[[ $(kt_sql "$db" "CHECKSUM TABLE named_t, kafka_offset") == "$before" ]] || fail "the same named range again changed something"
kt_audit "$db_uri"
note "$TEST_NAME: replay --job LIVE kept apart; one range in three spellings counted once; long table names apart; a named replay's range fixed"
