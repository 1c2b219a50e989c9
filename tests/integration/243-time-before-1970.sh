#!/usr/bin/env bash
# Moments before 1970 never reach Kafka: ListOffsets reads a negative
# "timestamp" as a special value (-1 the end, -2 the start) or refuses it
# ("Broker: API version not supported"). Such a moment is before every
# record a topic can hold (Kafka's timestamps count from 1970), so it falls
# on each partition's log start, as any moment before the first record
# does: `reset --to-datetime 1969-12-31T23:59:59.999Z` (-1 ms), a moment of
# 1900, `--by-duration 30000d` put every partition at its log start, and
# `replay --from-datetime 1969-12-31T23:59:59.999Z` and `--last 30000d`
# count the whole topic; `--until-datetime` before 1970 ends a replay at
# the log start (an empty range), not at each partition's end. Red before:
# -1 ms was "latest" (every partition at its end: a replay of nothing, a
# reset planning a move forward), and `--until-datetime` of -1 ms read as
# "no --until-datetime" (the whole topic counted).
# broker: any — no offsets-for-times request is made, so the mock (which cannot answer one) must pass too
source "$(dirname "$0")/lib.sh"

topic=$(kt_new_topic before_1970 2)
kt_gen "$topic" --lines 300 --seed "$KT_SEED" --truth "$WORK/truth" > /dev/null || fail "kt-gen failed"
db_uri=$(kt_new_db before_1970); db=$(kt_db_name "$db_uri")
"$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --mode idempotent --interval 0 \
  --exit-when-idle 2> "$WORK/run.log" || fail "the run failed"
kt_check_counts "$db" "$WORK/truth"

plan() {  # plan ARGS...: the reset's dry run as JSON into $WORK/plan.json
  "$KTALLY" reset --brokers "$KT_BROKERS" --db "$db_uri" --job "$topic" --json "$@" \
    > "$WORK/plan.json" 2> "$WORK/reset.err" || { cat "$WORK/reset.err" >&2; fail "reset $* failed"; }
}
at_log_start() {  # at_log_start WHAT: every partition's moment at its log start, a record
  jq -e '[.partitions[] | .at.offset == .log_start and .new == .log_start and .at.place == "record"
          and .move == "back"] | all' "$WORK/plan.json" > /dev/null \
    || { cat "$WORK/plan.json" >&2; fail "$1: not every partition at its log start"; }
}
plan --to-datetime 1969-12-31T23:59:59.999Z
at_log_start "--to-datetime 1969-12-31T23:59:59.999Z"
[[ $(jq -r .moment.ms "$WORK/plan.json") == -1 && $(jq -r .moment.utc "$WORK/plan.json") == 1969-12-31T23:59:59.999Z ]] \
  || fail "the moment is not -1 ms: $(jq -c .moment "$WORK/plan.json")"
plan --to-datetime 1900-01-01T00:00:00Z
at_log_start "--to-datetime 1900-01-01T00:00:00Z"
plan --by-duration 30000d
at_log_start "--by-duration 30000d"
[[ $(jq -r .moment.ms "$WORK/plan.json") -lt 0 ]] || fail "30000 days ago is not before 1970"

replay() {  # replay TABLE ARGS...: the table must equal TRUTH_FILE ($truth)
  local table=$1; shift
  "$KTALLY" replay --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --table "$table" "$@" \
    2> "$WORK/$table.log" || { cat "$WORK/$table.log" >&2; fail "replay $* failed"; }
}
replay rp_epoch --from-datetime 1969-12-31T23:59:59.999Z
kt_check_counts "$db" "$WORK/truth" rp_epoch
replay rp_last --last 30000d
kt_check_counts "$db" "$WORK/truth" rp_last
replay rp_before --from-datetime 1960-01-01T00:00:00Z --until-datetime 1969-12-31T23:59:59.999Z
[[ $(kt_sql "$db" "SELECT COUNT(*) FROM rp_before") == 0 ]] \
  || fail "a range ending before 1970 counted $(kt_sql "$db" "SELECT SUM(log_count) FROM rp_before") ERROR lines"
# The job's own offsets and counts never moved (dry runs).
kt_check_counts "$db" "$WORK/truth"
kt_audit "$db_uri"
