#!/usr/bin/env bash
# A replay given by time is its moments, and its first run stores the
# offsets they resolved to (ktally_job.replay_times, replay_range): run
# again, it takes that range, whatever the log has become, so it resumes
# or finds itself finished and counts nothing twice. Here the range ends at
# each partition's end (no --until-datetime) and the log grows between the
# runs: the rerun counts nothing (logged "as its first run resolved them"),
# another spelling of the same moment is the same replay, a run killed -9
# after its first commit resumes its first range (not the grown one), and a
# named replay run again with other moments is refused. Red before: the
# rerun asked Kafka again, got the grown range, derived another replay from
# it and counted the first one's records again (the table held them twice).
# The moment is before 1970 (each log start) so that the mock broker, which
# cannot look offsets up by time, can run it; 240-time-moves does the same
# with real moments and an --until-datetime past the last record.
# broker: any — no offsets-for-times request is made (moments before 1970)
source "$(dirname "$0")/lib.sh"

topic=$(kt_new_topic replay_rerun 3)
db_uri=$(kt_new_db replay_rerun); db=$(kt_db_name "$db_uri")
replay() {  # replay TABLE ARGS...: its json log into $WORK/TABLE.log
  local table=$1; shift
  "$KTALLY" replay --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --table "$table" \
    --log-format json "$@" 2> "$WORK/$table.log" || { cat "$WORK/$table.log" >&2; fail "replay $* failed"; }
}
resolved() { jq -Rr 'fromjson? | select(.event == "replay-range") | .resolved' "$WORK/$1.log"; }

kt_gen "$topic" --lines 300 --seed "$KT_SEED" --truth "$WORK/t1" > /dev/null
replay rp --from-datetime 1969-12-31T00:00:00Z
kt_check_counts "$db" "$WORK/t1" rp
first=$(resolved rp)

kt_gen "$topic" --lines 300 --seed $((KT_SEED + 1)) --start "2018-01-01 00:00:00" --truth "$WORK/t2" > /dev/null
replay rp --from-datetime 1969-12-31T00:00:00Z
kt_check_counts "$db" "$WORK/t1" rp
[[ $(kt_sql "$db" "SELECT replay_times FROM ktally_job WHERE job LIKE 'replay.rp.%'") == "1969-12-31T00:00:00.000Z/.." ]] \
  || fail "the moments are not stored: $(kt_sql "$db" "SELECT job, replay_times, replay_range FROM ktally_job")"
[[ $first == now ]] || fail "the first run did not resolve the range: $first"
[[ $(resolved rp) == first-run ]] || fail "the rerun did not take the stored range: $(resolved rp)"
[[ $(kt_log_sum done records "$WORK/rp.log") == 0 ]] || fail "the rerun read records"
replay rp --from-datetime 1969-12-31T01:00:00+01:00   # the same moment
kt_check_counts "$db" "$WORK/t1" rp
[[ $(kt_sql "$db" "SELECT COUNT(*) FROM ktally_job WHERE job LIKE 'replay.%'") == 1 ]] \
  || fail "one replay made several jobs: $(kt_sql "$db" "SELECT job, replay_times, replay_range FROM ktally_job")"

# Killed -9 once its range is stored (its offset rows are its first
# write), then rerun after the log grew: its first range, once.
kt_sum_truths "$WORK/t1" "$WORK/t2" > "$WORK/t12"
"$KTALLY" replay --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --table rp2 \
  --from-datetime 1969-12-30T00:00:00Z --max-per-partition 2 2> "$WORK/killed.log" &
pid=$!
committed() { (($(kt_sql "$db" "SELECT COUNT(*) FROM ktally_batches WHERE target = 'rp2'" 2> /dev/null || echo 0) > 0)); }
kt_wait_for 30 committed || fail "the replay never committed"
kill -9 "$pid"; wait "$pid" 2> /dev/null || true
done_before=$(kt_sql "$db" "SELECT COALESCE(SUM(log_count), 0) FROM rp2")
kt_gen "$topic" --lines 300 --seed $((KT_SEED + 2)) --start "2019-01-01 00:00:00" --truth "$WORK/t3" > /dev/null
replay rp2 --from-datetime 1969-12-30T00:00:00Z
[[ $(resolved rp2) == first-run ]] || fail "the rerun after kill -9 did not take the stored range"
kt_check_counts "$db" "$WORK/t12" rp2
note "killed with $done_before ERROR lines counted of $(awk -F'\t' '{ n += $2 } END { print n }' "$WORK/t12")"

# Named: the moments are the replay; others are refused.
replay rp3 --job night --from-datetime 1969-12-31T00:00:00Z
rc=0
"$KTALLY" replay --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --table rp3 --job night \
  --from-datetime 1969-12-30T00:00:00Z > "$WORK/out" 2> "$WORK/err" || rc=$?
((rc == 2)) && [[ $(grep -c . "$WORK/err") == 1 ]] \
  && grep -qF "was created with --from-datetime/--until-datetime '1969-12-31T00:00:00.000Z/..'" "$WORK/err" \
  || { cat "$WORK/err" >&2; fail "a named replay run with other moments: exit $rc, not refused in one line"; }
kt_audit "$db_uri"
