#!/usr/bin/env bash
# ktally status: stored offsets, log start, high watermark, lag and data
# loss per partition match the broker's watermarks and kafka_offset,
# including a partition whose stored offset fell behind the log start;
# --job alone shows every topic the job reads (it knows them).
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

db_uri=$(kt_new_db status); db=$(kt_db_name "$db_uri")
topic=$(kt_new_trimmed_topic status 3)
status() { "$KTALLY" status --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" "$@"; }

# Before any run: no such job (exit 2, #16: not a job with everything to
# do), nothing created.
rc=0; status --json > "$WORK/s0.json" 2> "$WORK/s0.err" || rc=$?
((rc == 2)) && grep -q "no job '$topic' in .*: no job has run there yet" "$WORK/s0.err" \
  || { cat "$WORK/s0.err" >&2; fail "status of a job that never ran: exit $rc"; }
[[ $(kt_sql "$db" "SHOW TABLES" | wc -l) == 0 ]] || fail "status created tables"
json() {  # json FILE EXPR: prints a Python expression over the document `d`
  /usr/bin/python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@"
}

kt_gen "$topic" --lines 3000 --lines-per-value 10 --seed 7 > /dev/null          # 100 records each
"$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --interval 0 --exit-when-idle 2> /dev/null
kt_gen "$topic" --lines 1500 --partition 0 --seed 8 > /dev/null                # 1500 more on partition 0
# Partition 2 loses data under its stored offset (100): ~12 MB more.
kt_gen "$topic" --lines 300000 --lines-per-value 50 --partition 2 --seed 9 > /dev/null
kt_wait_trimmed "$topic" 2 100 > /dev/null

wm=$(kt_watermarks "$topic")   # "0:lo:hi 1:lo:hi 2:lo:hi"
status > "$WORK/s.txt"; status --json > "$WORK/s.json"
for entry in $wm; do
  IFS=: read -r p lo hi <<< "$entry"
  stored=$(kt_sql "$db" "SELECT \`offset\` FROM kafka_offset WHERE job = '$topic' AND \`partition\` = $p")
  lag=$((hi - (stored > lo ? stored : lo)))
  line=$(awk -v p="$p" '$1 == p' "$WORK/s.txt")
  # No transaction here: the last stable offset is the high watermark.
  read -r sp sstored slo slso shi slag _ <<< "$line"
  [[ "$sstored $slo $slso $shi $slag" == "$stored $lo $hi $hi $lag" ]] \
    || fail "partition $p: status says '$line', expected stored $stored, log start $lo, last stable and high $hi, lag $lag"
  [[ $(json "$WORK/s.json" "[(x['stored'], x['log_start'], x['last_stable_offset'], x['high_watermark'], x['lag']) for x in d['partitions'] if x['partition'] == $p]") \
     == "[($stored, $lo, $hi, $hi, $lag)]" ]] || fail "partition $p: the JSON does not match"
  if ((stored < lo)); then
    [[ $line == *"YES: [$stored, $lo) gone"* ]] || fail "partition $p: data loss not shown: $line"
    [[ $(json "$WORK/s.json" "[(x['data_lost'], x['lost_offsets']) for x in d['partitions'] if x['partition'] == $p]") \
       == "[(True, $((lo - stored)))]" ]] || fail "partition $p: data loss not in the JSON"
    shown_loss=$p
  fi
done
[[ ${shown_loss:-} == 2 ]] || fail "partition 2's data loss was not detected (watermarks: $wm)"

# Strings in the JSON are escaped (owners come from other processes; before,
# a quote in one made the document invalid). The owners are the group's
# members where the broker describes groups; the mock does not, and then
# each partition's last committer stands in: that is where a test can
# put quotes. Apache Kafka describes the group: no member, no owner.
kt_sql "$db" "UPDATE ktally_batches SET member = 'odd \"member\" \\\\ x' WHERE \`partition\` = 1"
status --json --group "g$RUN_ID" > "$WORK/g.json" 2> /dev/null || fail "status --group failed"
if [[ $KT_KAFKA == mock ]]; then
  [[ $(json "$WORK/g.json" "[x['owner'] for x in d['partitions'] if x['partition'] == 1]") == "['odd \"member\" \\\\ x']" ]] \
    || { cat "$WORK/g.json" >&2; fail "an owner with quotes is not escaped in the JSON"; }
else
  [[ $(json "$WORK/g.json" "[x['owner'] for x in d['partitions']]") == "[None, None, None]" ]] \
    || { cat "$WORK/g.json" >&2; fail "a group without members has owners"; }
fi
note "$TEST_NAME: 3 partitions match the broker and kafka_offset, data loss on partition 2 shown"

# A job with its offsets in Kafka (--offsets kafka): status shows the group's
# committed offsets (before: stored "-", and the whole topic as lag), and a
# job of two topics shows both (before: --topic a,b was refused).
kdb_uri=$(kt_new_db statusk); t1=$(kt_new_topic statusk1 2); t2=$(kt_new_topic statusk2 1)
kt_gen "$t1" --lines 900 --partitions 2 --seed 17 > /dev/null
kt_gen "$t2" --lines 500 --seed 18 > /dev/null
"$KTALLY" run --brokers "$KT_BROKERS" --topic "$t1,$t2" --job "k$RUN_ID" --db "$kdb_uri" \
  --mode idempotent --offsets kafka --interval 0 --exit-when-idle 2> "$WORK/k.log" || { tail -5 "$WORK/k.log" >&2; fail "the --offsets kafka run failed"; }
"$KTALLY" status --brokers "$KT_BROKERS" --topic "$t1,$t2" --job "k$RUN_ID" --db "$kdb_uri" --json > "$WORK/k.json" \
  || fail "status --topic a,b failed"
[[ $(json "$WORK/k.json" "[(t['topic'], t['offsets'], t['totals']['stored'], t['totals']['lag']) for t in d]") \
   == "[('$t1', 'kafka', 900, 0), ('$t2', 'kafka', 500, 0)]" ]] || { cat "$WORK/k.json" >&2; fail "status of a --offsets kafka job of two topics is wrong"; }
"$KTALLY" status --brokers "$KT_BROKERS" --topic "$t1,$t2" --job "k$RUN_ID" --db "$kdb_uri" > "$WORK/k.txt" || fail "status --topic a,b failed"
[[ $(grep -c "offsets in Kafka's consumer group ktally-k$RUN_ID" "$WORK/k.txt") == 2 ]] || { cat "$WORK/k.txt" >&2; fail "the table does not say where the offsets are"; }
# --job alone: the job knows its topics (red before: "--topic is required").
"$KTALLY" status --brokers "$KT_BROKERS" --job "k$RUN_ID" --db "$kdb_uri" --json > "$WORK/kj.json" \
  || fail "status --job without --topic failed"
cmp -s "$WORK/k.json" "$WORK/kj.json" || { diff "$WORK/k.json" "$WORK/kj.json" >&2; fail "status --job alone differs from status --topic a,b --job"; }
rc=0; "$KTALLY" status --brokers "$KT_BROKERS" --job "nosuch$RUN_ID" --db "$kdb_uri" 2> "$WORK/kn.err" || rc=$?
[[ $rc == 2 ]] && grep -q "no job 'nosuch$RUN_ID'.*its jobs: k$RUN_ID" "$WORK/kn.err" \
  || { cat "$WORK/kn.err" >&2; fail "status --job of an unknown job: exit $rc"; }
rc=0; "$KTALLY" status --brokers "$KT_BROKERS" --db "$kdb_uri" 2> "$WORK/kt.err" || rc=$?
[[ $rc == 2 ]] && grep -q "topic is required" "$WORK/kt.err" || fail "status without --topic or --job: exit $rc"
note "$TEST_NAME: a --offsets kafka job of two topics: the group's offsets, lag 0; --job alone shows the same"
