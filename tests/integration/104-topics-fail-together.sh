#!/usr/bin/env bash
# A job of several topics is one job: when one topic's runner fails for good
# (here: data lost to retention under its stored offset), the whole job stops
# at once with that topic's exit status, while the other topic still has
# data arriving. Before, the other runner went on and the job exited (4) only
# at SIGTERM, or once the other topic was idle with --exit-when-idle.
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

db_uri=$(kt_new_db topics_fail); db=$(kt_db_name "$db_uri")
a=$(kt_new_topic topics_fail_a 2)
b=$(kt_new_trimmed_topic topics_fail_b 1)
job=tf$RUN_ID
kt_gen "$b" --lines 20000 --lines-per-value 20 --seed 71 > /dev/null || fail "kt-gen failed"
"$KTALLY" run --brokers "$KT_BROKERS" --topic "$a,$b" --job "$job" --db "$db_uri" \
  --interval 0 --exit-when-idle 2> "$WORK/first.log" || { cat "$WORK/first.log" >&2; fail "first run failed"; }
# ~12 MB more on b: the log start moves past b's stored offset (1000).
kt_gen "$b" --lines 300000 --lines-per-value 50 --seed 72 > /dev/null || fail "kt-gen failed"
kt_wait_trimmed "$b" 0 1000 > /dev/null

# a keeps receiving data for longer than the job may take to stop.
"$KT_GEN" --brokers "$KT_BROKERS" --topic "$a" --lines 200000 --rate 5000 --seed 73 > /dev/null &
KT_CHILDREN+=($!)
start=$SECONDS
rc=0; timeout 30 "$KTALLY" run --brokers "$KT_BROKERS" --topic "$a,$b" --job "$job" --db "$db_uri" \
  --interval 0.5 2> "$WORK/run.log" || rc=$?
[[ $rc == 4 ]] || { tail -5 "$WORK/run.log" >&2; fail "exit $rc after $((SECONDS - start)) s, expected 4 at once"; }
grep -q "ktally: topic $b[:,] .*lost to retention" "$WORK/run.log" || { tail -3 "$WORK/run.log" >&2; fail "the error does not name topic $b"; }
note "$TEST_NAME: topic b lost data: the two-topic job stopped in $((SECONDS - start)) s with exit 4"
