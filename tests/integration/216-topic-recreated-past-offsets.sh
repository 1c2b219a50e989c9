#!/usr/bin/env bash
# A topic deleted and created again whose new log has already grown past
# a job's stored offsets (KT_MODE transactional or idempotent): the job
# stops, exit 4, one error line naming the partition, the offset of the
# record it counted last there, and the ways out (`ktally forget`,
# `ktally reset ... --rebuild`), counting nothing of the new log and
# moving no offset (also with --on-data-loss skip: not a retention
# matter), also with --offsets kafka (whose consumer group offsets go with
# the deleted topic: the anchors are kept with the counts); the way out
# then counts the new log exactly (forget: added to the old log's counts;
# reset --rebuild: the new log alone), audit clean.
# The same while a run reads it: a live run, and a live --group member,
# whose topic is deleted and created again with the same replicas (so
# that no leader moves and no listing differs: only the reader's fetcher
# sees the partitions vanish) and grown past the offsets, stop with exit 4
# and count nothing of the new log. Red before: each read on from the
# stored offsets (5,975 of 8,056 ERROR lines in the issue's run; here the
# runs exited 0 with the new log's later records added to the old log's
# counts).
# broker: apache — topics deleted and created again under the same name; the mock cannot delete a topic
source "$(dirname "$0")/lib.sh"

mode=${KT_MODE:-transactional}
anchors() {  # anchors DB: the anchor rows of its job, "PARTITION:OFFSET ..."
  local table=kafka_offset
  [[ $mode == idempotent ]] && table=ktally_coverage
  kt_sql "$1" "SELECT GROUP_CONCAT(CONCAT(\`partition\`, ':', anchor_offset) ORDER BY \`partition\` SEPARATOR ' ')
               FROM $table WHERE anchor_offset IS NOT NULL"
}
run() {  # run URI ARGS...: a run to idle, its stderr in $WORK/err; its exit status
  local uri=$1 rc=0; shift
  "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$uri" --mode "$mode" \
    --interval 0 --exit-when-idle --log-format json "$@" 2> "$WORK/err" || rc=$?
  cat "$WORK/err" >> "$WORK/runs.log"
  return "$rc"
}
one_error() {  # one_error WHAT...: $WORK/err holds one error line (and no warning) saying each WHAT
  local what
  jq -Rr 'fromjson? | select(.level == "error" or .level == "warning") | .message' "$WORK/err" > "$WORK/lines"
  [[ $(wc -l < "$WORK/lines") == 1 ]] || { cat "$WORK/err" >&2; fail "not one line"; }
  for what in "$@"; do
    grep -qF -- "$what" "$WORK/lines" || { cat "$WORK/lines" >&2; fail "the line does not say '$what'"; }
  done
}
stopped() {  # stopped URI ARGS...: the run exits 4 with the line of a record that is not the one counted
  local uri=$1 rc=0 db; shift
  db=$(kt_db_name "$uri")
  run "$uri" "$@" || rc=$?
  ((rc == 4)) || { cat "$WORK/err" >&2; fail "run $*: exit $rc, not 4"; }
  one_error "partition 0: the record at offset 999 is not the one job $topic counted there" \
    "deleted and created again" "\`ktally forget --job $topic --execute\`" \
    "\`ktally reset --job $topic --to earliest --rebuild --execute\`"
  kt_check_counts "$db" "$WORK/t1"
  [[ $(kt_offset_sum "$db" "$topic") == 2000 ]] || fail "run $*: the stored offsets moved"
}

# Two jobs (a database each) count the old log; the topic goes, and comes
# back with twice as much.
topic=$(kt_new_topic past 2)
kt_gen "$topic" --lines 2000 --seed "$KT_SEED" --truth "$WORK/t1" > /dev/null || fail "kt-gen failed"
a_uri=$(kt_new_db past_a); a=$(kt_db_name "$a_uri")
b_uri=$(kt_new_db past_b); b=$(kt_db_name "$b_uri")
for uri in "$a_uri" "$b_uri"; do
  run "$uri" || { cat "$WORK/err" >&2; fail "the first run failed"; }
done
kt_check_counts "$a" "$WORK/t1"
if [[ $mode == idempotent ]]; then
  # And one whose offsets are in Kafka's consumer group.
  k_uri=$(kt_new_db past_k); k=$(kt_db_name "$k_uri")
  run "$k_uri" --offsets kafka || { cat "$WORK/err" >&2; fail "the first --offsets kafka run failed"; }
fi
kt_admin delete "$topic" || fail "cannot delete $topic"
kt_admin create "$topic" 2 > /dev/null || fail "cannot create $topic again"
kt_gen "$topic" --lines 4000 --seed $((KT_SEED + 1)) --truth "$WORK/t2" > /dev/null || fail "kt-gen failed"
[[ $(kt_watermarks "$topic") == "0:0:2000 1:0:2000" ]] || fail "the new topic: $(kt_watermarks "$topic")"

stopped "$a_uri"
[[ $(anchors "$a") == "0:999 1:999" ]] || fail "the anchors are not the last records counted: '$(anchors "$a")'"
if [[ $mode == idempotent ]]; then
  # The group's offsets went with the deleted topic (a job would start the
  # new log afresh, its covered offsets hiding the new log's records): the
  # anchors kept with the counts stop it all the same, before it commits
  # a start offset to the group.
  rc=0; run "$k_uri" --offsets kafka || rc=$?
  ((rc == 4)) || { cat "$WORK/err" >&2; fail "--offsets kafka: exit $rc, not 4"; }
  one_error "partition 0: the record at offset 999 is not the one job $topic counted there" \
    "deleted and created again"
  kt_check_counts "$k" "$WORK/t1"
  "$KTALLY" status --brokers "$KT_BROKERS" --topic "$topic" --db "$k_uri" --json > "$WORK/k.json" \
    || fail "status failed"
  jq -e '[.partitions[].stored] | all(. != 0)' "$WORK/k.json" > /dev/null \
    || { cat "$WORK/k.json" >&2; fail "--offsets kafka: a start offset was committed to the group"; }
fi
stopped "$a_uri" --on-data-loss skip
# The ways out. forget: the old log's counts stay, the new log is added.
"$KTALLY" forget --db "$a_uri" --job "$topic" --execute > /dev/null 2>&1 || fail "forget failed"
run "$a_uri" || { cat "$WORK/err" >&2; fail "the run after forget failed"; }
kt_check_counts "$a" <(kt_sum_truths "$WORK/t1" "$WORK/t2")
[[ $(anchors "$a") == "0:1999 1:1999" ]] || fail "the new anchors: '$(anchors "$a")'"
kt_audit "$a_uri"
# reset --rebuild: the new log alone.
stopped "$b_uri"
"$KTALLY" reset --brokers "$KT_BROKERS" --db "$b_uri" --job "$topic" --to earliest --rebuild \
  --execute > "$WORK/reset.out" 2>&1 || { cat "$WORK/reset.out" >&2; fail "reset --rebuild failed"; }
run "$b_uri" || { cat "$WORK/err" >&2; fail "the run after reset --rebuild failed"; }
kt_check_counts "$b" "$WORK/t2"
kt_audit "$b_uri"
note "$TEST_NAME ($mode): stopped at start, forget and reset --rebuild count the new log"

# While running: a live run and a live group member, the topic deleted
# and created again on the same replicas (the same leaders, the same
# listing) and grown past their offsets before the next batch.
live() {  # live NAME [RUN ARGS...]
  local name=$1 uri db pid rc=0 i; shift
  topic=$(kt_new_topic "$name" 2 --replicas 2,3,1)
  uri=$(kt_new_db "$name"); db=$(kt_db_name "$uri")
  kt_gen "$topic" --lines 2000 --seed "$KT_SEED" --truth "$WORK/t1" > /dev/null || fail "kt-gen failed"
  "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$uri" --mode "$mode" --interval 5 \
    --log-format json "$@" 2> "$WORK/err" &
  pid=$!; KT_CHILDREN+=("$pid")
  for ((i = 0; i < 600; i++)); do
    [[ $(kt_offset_sum "$db" "$topic" 2> /dev/null) == 2000 ]] && break
    kill -0 "$pid" 2> /dev/null || { cat "$WORK/err" >&2; fail "$name: the run ended"; }
    sleep 0.1
  done
  ((i < 600)) || fail "$name: the run did not count the old log within 60 s"
  kt_admin delete "$topic" || fail "cannot delete $topic"
  kt_admin create "$topic" 2 --replicas 2,3,1 > /dev/null || fail "cannot create $topic again"
  kt_gen "$topic" --lines 4000 --seed $((KT_SEED + 1)) > /dev/null || fail "kt-gen failed"
  for ((i = 0; i < 300; i++)); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
  kill -0 "$pid" 2> /dev/null && { kill -9 "$pid"; fail "$name: still running 30 s after the topic came back"; }
  wait "$pid" || rc=$?
  ((rc == 4)) || { cat "$WORK/err" >&2; fail "$name: exit $rc, not 4"; }
  jq -Rr 'fromjson? | select(.level == "error") | .message' "$WORK/err" > "$WORK/lines"
  [[ $(wc -l < "$WORK/lines") == 1 ]] || { cat "$WORK/err" >&2; fail "$name: not one error line"; }
  kt_check_counts "$db" "$WORK/t1"
  [[ $(kt_offset_sum "$db" "$topic") == 2000 ]] || fail "$name: the stored offsets moved: $(kt_offset_sum "$db" "$topic")"
  note "$name: exit 4: $(head -c 160 "$WORK/lines")"
}
live past_live
live past_member --group "g_$RUN_ID"
note "$TEST_NAME ($mode): live run and group member stopped, nothing of the new log counted"
