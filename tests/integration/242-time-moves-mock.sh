#!/usr/bin/env bash
# A broker that cannot look offsets up by time (librdkafka's mock cluster
# answers "no record at or after it" for every moment) must not pass for
# one where every moment is after the last record: `reset --to-datetime`,
# `--by-duration` and `replay --last` stop with one line naming it (exit
# 3), nothing moved, no table made. Red before the check: each partition
# went to its high watermark, a silent move forward that skipped
# everything, and a replay of nothing.
# broker: mock — only the mock cluster cannot look offsets up by time (Apache Kafka can: 240-time-moves)
source "$(dirname "$0")/lib.sh"

topic=$(kt_new_topic time_mock 2)
kt_gen "$topic" --lines 500 --seed "$KT_SEED" > /dev/null || fail "kt-gen failed"
db_uri=$(kt_new_db time_mock); db=$(kt_db_name "$db_uri")
"$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --mode idempotent --interval 0 \
  --exit-when-idle 2> "$WORK/run.log" || fail "the run failed"
before=$(kt_sql "$db" "SELECT * FROM kafka_offset ORDER BY 1, 2, 3; SHOW TABLES")
cannot() {  # cannot ARGS...: exit 3, one line saying so
  local rc=0
  "$KTALLY" "$@" > "$WORK/out" 2> "$WORK/err" || rc=$?
  ((rc == 3)) || { cat "$WORK/out" "$WORK/err" >&2; fail "$1 exited $rc, not 3"; }
  [[ $(grep -c . "$WORK/err") == 1 ]] || { cat "$WORK/err" >&2; fail "$1: not one line"; }
  grep -q "cannot look up offsets by time" "$WORK/err" || { cat "$WORK/err" >&2; fail "$1 does not say why"; }
}
cannot reset --brokers "$KT_BROKERS" --db "$db_uri" --job "$topic" --to-datetime 2017-07-30T14:00:00Z --execute
cannot reset --brokers "$KT_BROKERS" --db "$db_uri" --job "$topic" --by-duration 1h
cannot replay --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --last 1h --table by_time
[[ $(kt_sql "$db" "SELECT * FROM kafka_offset ORDER BY 1, 2, 3; SHOW TABLES") == "$before" ]] \
  || fail "something changed"
# --shift-by needs no lookup by time: it works here.
"$KTALLY" reset --brokers "$KT_BROKERS" --db "$db_uri" --job "$topic" --shift-by -3 --json > "$WORK/plan.json" \
  || fail "--shift-by failed"
jq -e '[.partitions[] | .new == .stored - 3] | all' "$WORK/plan.json" > /dev/null || fail "--shift-by -3: $(cat "$WORK/plan.json")"
