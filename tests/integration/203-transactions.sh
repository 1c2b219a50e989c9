#!/usr/bin/env bash
# Topics written by transactional producers, in KT_MODE (transactional or
# idempotent): committed and aborted transactions interleaved in every
# partition; a producer that dies inside its transaction (the broker aborts
# it at its transaction.timeout.ms) read by runs killed -9 in between; a
# transaction held open across several batches, with a second producer
# committing behind it. ktally counts exactly the committed records, never
# an aborted one; a run does not wait for the open transaction (it ends
# idle at the last stable offset within a few intervals, having counted
# what is before it) and counts it once it commits; the stored offsets end
# at the high watermarks, past the control records; `status` and
# `/metrics` give lag against what can be read (0 at the last stable
# offset while the transaction is open), and `status` shows the last
# stable offset and the high watermark apart. Red if an aborted or open
# transaction's record is counted, a committed one is missed, a run waits
# for the open transaction, an offset stays below a control record, or
# the lag counts the open transaction, or status calls the last stable
# offset the high watermark (red before), or a partition's anchor is not
# its last committed record.
# broker: apache — only a real broker writes transaction markers, aborts a dead producer's transaction at its timeout and holds a last stable offset below an open one; the mock does none of these
source "$(dirname "$0")/lib.sh"

mode=${KT_MODE:-transactional}
topic=$(kt_new_topic txn 4)
db_uri=$(kt_new_db txn); db=$(kt_db_name "$db_uri")
# The high watermarks past any open transaction: kt_watermarks (like
# ktally) asks read_committed, which answers the last stable offset.
high() {  # high: "P OFFSET" lines
  kcat -b "$KT_BROKERS" -X isolation.level=read_uncommitted -Q -t "$topic:0:-1" -t "$topic:1:-1" \
    -t "$topic:2:-1" -t "$topic:3:-1" 2> /dev/null | sed -n 's/.*\[\([0-9]*\)\] offset \([0-9]*\)$/\1 \2/p' | sort
}
high_sum() { high | awk '{ s += $2 } END { print s + 0 }'; }
run=("$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --mode "$mode"
     --interval 1 --max-per-partition 300 --log-format json)

# 1. Committed and aborted transactions interleaved in every partition (40
#    messages a transaction over 4 partitions, every 3rd aborted), then a
#    producer that exits inside its third transaction.
kt_gen "$topic" --transactional --txn-messages 40 --abort-every 3 --lines 4000 \
  --seed "$KT_SEED" --truth "$WORK/t1" > "$WORK/gen1.out" || fail "kt-gen (aborts) failed"
grep -q "aborted=33 " "$WORK/gen1.out" || fail "kt-gen did not abort 33 transactions: $(cat "$WORK/gen1.out")"
kt_gen "$topic" --transactional --txn-messages 200 --leave-open --txn-timeout-ms 5000 --lines 600 \
  --seed $((KT_SEED + 1)) --truth "$WORK/t2" > "$WORK/gen2.out" || fail "kt-gen (left open) failed"
grep -q "left_open=200" "$WORK/gen2.out" || fail "kt-gen did not leave 200 open: $(cat "$WORK/gen2.out")"
# The last stable offsets (kt_watermarks asks read_committed) at the high
# watermarks: no transaction open any more.
stable() { [[ $(kt_watermarks "$topic" | tr ' ' '\n' | awk -F: '{ print $1, $3 }' | sort) == "$(high)" ]]; }
stable && fail "the dead producer's transaction is not open (or kcat -Q fails): $(high | tr '\n' ' ')"

# 2. Runs killed -9 while the dead producer's transaction is still open,
#    then runs until everything before it is counted: it ends when the
#    broker aborts that transaction (its 5 s timeout).
kills=0
for i in 1 2; do kt_kill9 1000 1500 "$WORK/run.log" "${run[@]}" && kills=$((kills + 1)); done
kt_sum_truths "$WORK/t1" "$WORK/t2" > "$WORK/truth12"
kt_wait_for 30 stable || fail "the broker did not abort the dead producer's transaction within 30 s"
counted() {  # counted TRUTH: a run to the end leaves error_log == TRUTH
  "${run[@]}" --exit-when-idle 2>> "$WORK/run.log" || fail "run --exit-when-idle failed"
  kt_sql "$db" "SELECT log_time, log_count FROM error_log ORDER BY log_time" | cmp -s - "$1"
}
kt_wait_for 40 counted "$WORK/truth12" || kt_check_counts "$db" "$WORK/truth12"

# 3. A live run serving /metrics, caught up on plain records; then a
#    transaction held open for 8 s, a second producer committing behind it.
kt_gen "$topic" --lines 100 --seed $((KT_SEED + 4)) --truth "$WORK/t5" > /dev/null || fail "kt-gen failed"
kt_sum_truths "$WORK/t1" "$WORK/t2" "$WORK/t5" > "$WORK/before"
"${run[@]}" --http 127.0.0.1:0 2>> "$WORK/live.log" &
live=$!; KT_CHILDREN+=("$live")
kt_wait_for 10 grep -q "on port [0-9]* of" "$WORK/live.log" || fail "no --http line"
port=$(grep -o "on port [0-9]* of" "$WORK/live.log" | head -1 | awk '{ print $3 }')
lag_sum() {  # lag_sum: "PARTITIONS LAG" from /metrics
  curl -s -m 5 "http://127.0.0.1:$port/metrics" \
    | awk '/^ktally_partition_lag\{/ { s += $2; n++ } END { print n + 0, s + 0 }'
}
caught_up() { [[ $(lag_sum) == "4 0" ]]; }
kt_wait_for 20 caught_up || fail "/metrics: the live run did not catch up: $(lag_sum)"
kt_gen "$topic" --transactional --txn-messages 300 --hold-open-ms 8000 --lines 300 \
  --seed $((KT_SEED + 2)) --truth "$WORK/t3" > "$WORK/gen3.out" &
gen3=$!; KT_CHILDREN+=("$gen3")
kt_wait_for 20 grep -q "^open" "$WORK/gen3.out" || fail "kt-gen never opened its transaction"
opened=$SECONDS
kt_gen "$topic" --transactional --txn-messages 50 --lines 200 --seed $((KT_SEED + 3)) \
  --truth "$WORK/t4" > /dev/null || fail "kt-gen (behind the open one) failed"
# A run to its end does not wait for the open transaction.
t0=$(date +%s%3N)
"${run[@]}" --exit-when-idle 2>> "$WORK/run.log" || fail "run --exit-when-idle failed"
took=$(($(date +%s%3N) - t0))
((took < 4000)) || fail "a run took $took ms with a transaction open: it waited for it"
kt_check_counts "$db" "$WORK/before"
# status and /metrics: lag 0 at the last stable offset, below the high watermark.
"$KTALLY" status --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --json > "$WORK/status.json" \
  || fail "status failed"
[[ $(jq '.totals.lag' "$WORK/status.json") == 0 ]] \
  || { cat "$WORK/status.json" >&2; fail "status counts the open transaction as lag"; }
[[ $(high | wc -l) == 4 ]] || fail "kcat -Q did not give 4 high watermarks: $(high)"
# It names both ends: the last stable offset (where reading ends, the
# lag's reference: here each stored offset) and the high watermark (open
# transactions included, as a read_uncommitted client sees it), in JSON
# and in the table. Red before: one 'high_watermark' holding the last
# stable offset.
jq -r '.partitions[] | "\(.partition) \(.high_watermark)"' "$WORK/status.json" | sort | cmp -s - <(high) \
  || { cat "$WORK/status.json" >&2; high >&2; fail "status's high_watermark is not the high watermark"; }
jq -e '(.partitions | all(.last_stable_offset == .stored))
       and .totals.high_watermark > .totals.last_stable_offset' "$WORK/status.json" > /dev/null \
  || { cat "$WORK/status.json" >&2; fail "status's last_stable_offset is not where the job stands, or not below the open transaction"; }
"$KTALLY" status --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" > "$WORK/status.txt" \
  || fail "status failed"
grep -q "last stable *high watermark" "$WORK/status.txt" \
  && [[ $(awk '$1 == "total" { print $3, $4 }' "$WORK/status.txt") \
        == "$(jq -r '.totals | "\(.last_stable_offset) \(.high_watermark)"' "$WORK/status.json")" ]] \
  || { cat "$WORK/status.txt" >&2; fail "status's table does not show the last stable offset and the high watermark"; }
(($(kt_offset_sum "$db" "$topic") < $(high_sum))) \
  || fail "the stored offsets are at the high watermarks ($(high_sum)): past the open transaction?"
[[ $(lag_sum) == "4 0" ]] || fail "/metrics counts the open transaction as lag: $(lag_sum)"
((SECONDS - opened < 8)) || fail "too slow: the transaction was no longer open when the lag was read"
wait "$gen3" || fail "kt-gen (held open) failed"
kt_sum_truths "$WORK/t1" "$WORK/t2" "$WORK/t3" "$WORK/t4" "$WORK/t5" > "$WORK/truth"
at_end() {  # every stored offset at the high watermark, past the commit markers
  [[ $(kt_offset_sum "$db" "$topic") == "$(high_sum)" ]]
}
kt_wait_for 20 at_end || fail "the stored offsets did not reach the high watermarks: $(high | tr '\n' ' ') vs $(kt_offset_sum "$db" "$topic")"
kt_stop "$live" || fail "the live run did not exit 0 on SIGTERM"
kt_check_counts "$db" "$WORK/truth"
high > "$WORK/high"
while read -r p hi; do
  [[ $(kt_sql "$db" "SELECT \`offset\` FROM kafka_offset WHERE topic = '$topic' AND \`partition\` = $p") == "$hi" ]] \
    || fail "partition $p: stored offset is not the high watermark $hi"
done < "$WORK/high"
# Each partition's anchor (the record counted last) is its last committed
# record, never a commit marker or an aborted record past it, though
# markers end every partition's log here.
anchors=kafka_offset
[[ $mode == idempotent ]] && anchors=ktally_coverage
for p in 0 1 2 3; do
  last=$(kcat -b "$KT_BROKERS" -X isolation.level=read_committed -C -t "$topic" -p "$p" -o beginning -e -q \
           -f '%o\n' 2> /dev/null | tail -1)
  [[ $(kt_sql "$db" "SELECT anchor_offset FROM $anchors WHERE topic = '$topic' AND \`partition\` = $p") == "$last" ]] \
    || fail "partition $p: the anchor is not the last committed record ($last): $(kt_sql "$db" "SELECT anchor_offset FROM $anchors WHERE \`partition\` = $p")"
done
kt_audit "$db_uri"
note "$TEST_NAME ($mode): $kills runs killed -9, 33 aborted and 1 timed-out transactions left out, a run with a transaction open took $took ms"
kt_admin delete "$topic"
