#!/usr/bin/env bash
# A topic deleted while `run` reads it (KT_MODE transactional or
# idempotent), alone and as a --group member: the run ends by itself
# within a bounded time (exit 4) and says why in one error line naming
# the topic ("is gone ... deleted while the job ran"), what it committed
# before stays exact; a SIGTERM sent right after the deletion ends it
# within seconds too; deleted and created again shorter while it runs, it
# ends with exit 4 as well. Red before: the run hung for ever inside
# rd_kafka_destroy() (librdkafka 2.0.2 keeps a reference to a partition
# deleted under its assignment), SIGTERM was ignored and the error never
# printed (3 of 3 runs); a --group member retried the deleted topic's
# watermarks for ever.
# broker: apache — topics deleted (and created again) under a running job; the mock cannot delete a topic
source "$(dirname "$0")/lib.sh"

mode=${KT_MODE:-transactional}
# Seconds a run may take to end once its topic is gone: the next plan
# (at most --interval plus a 1 s retry away) sees it, and closing the
# client waits at most 2 s for librdkafka (then leaves it behind).
bound=25

start() {  # start NAME [RUN ARGS...]: a topic of 2000 lines, a live run counting it
  topic=$(kt_new_topic "$1" 2); shift
  db_uri=$(kt_new_db "${topic%_*}"); db=$(kt_db_name "$db_uri")
  kt_gen "$topic" --lines 2000 --seed "$KT_SEED" --truth "$WORK/truth" > /dev/null || fail "kt-gen failed"
  : > "$WORK/err"
  "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --mode "$mode" \
    --interval 1 --log-format json "$@" 2> "$WORK/err" &
  pid=$!; KT_CHILDREN+=("$pid")
  kt_wait_for 60 committed || { cat "$WORK/err" >&2; fail "$topic: the run did not count the topic"; }
  kt_check_counts "$db" "$WORK/truth"
}
committed() { [[ $(kt_sql "$db" "SELECT COALESCE(SUM(\`offset\`), 0) FROM kafka_offset" 2> /dev/null) == 2000 ]]; }
ended() {  # ended WHAT RC...: the run ended within $bound s with one of the RCs, one error line saying WHAT
  local what=$1 rc=0 i; shift
  for ((i = 0; i < bound * 10; i++)); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2> /dev/null; then
    gdb -q -batch -p "$pid" -ex "thread apply all bt 12" 2> /dev/null | grep -E "^#[0-9]+ .* in (kt_|rd_kafka)" | head -12 >&2
    fail "$topic: the run did not end within $bound s of the deletion"
  fi
  wait "$pid" || rc=$?
  [[ " $* " == *" $rc "* ]] || { cat "$WORK/err" >&2; fail "$topic: the run exited $rc, not $*"; }
  jq -Rr 'fromjson? | select(.level == "error") | .message' "$WORK/err" > "$WORK/lines"
  if [[ -n $what ]]; then
    [[ $(wc -l < "$WORK/lines") == 1 ]] && grep -qE -- "$what" "$WORK/lines" && grep -qF "$topic" "$WORK/lines" \
      || { cat "$WORK/err" >&2; fail "$topic: not one error line naming the topic and saying '$what'"; }
  fi
  kt_check_counts "$db" "$WORK/truth"
}
gone="is gone .*deleted while the job ran"

# Deleted under a run reading it, and under a group member.
for group in "" "--group g_$RUN_ID"; do
  start deleted $group
  kt_admin delete "$topic" || fail "cannot delete $topic"
  ended "$gone" 4
  note "deleted under ${group:-a run}: exit 4 in $((SECONDS))s of the test, '$(head -c 150 "$WORK/lines")'"
done

# A SIGTERM right after the deletion: answered (exit 0 if it came first,
# 4 if the deletion ended the run first), within the bound.
start sigterm
kt_admin delete "$topic" || fail "cannot delete $topic"
kill -TERM "$pid"
ended "" 0 4

# Deleted and created again, shorter, while the run reads it: exit 4,
# whichever it sees first (the topic gone, or its offsets past the new
# log's end).
start recreated
kt_admin delete "$topic" || fail "cannot delete $topic"
kt_admin create "$topic" 2 > /dev/null || fail "cannot create $topic again"
kt_gen "$topic" --lines 200 --seed $((KT_SEED + 1)) > /dev/null || fail "kt-gen failed"
ended "$gone|beyond the high watermark" 4
note "$TEST_NAME ($mode): deleted, deleted under a group member, SIGTERM, recreated shorter: each ended in time, exit 4, one line"
