#!/usr/bin/env bash
# A record batch larger than receive.message.max.bytes (issue 11,
# hardening): librdkafka drops the connection and fetches the same answer
# again for ever, so ktally used to retry the batch for ever with "no
# record arrived ... for 30 s". Now it stops within seconds (exit 3, one
# line) naming the partition, the offset and the property to raise, having
# committed nothing of that batch; with the property raised the same data
# is counted exactly.
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

db_uri=$(kt_new_db toolarge); db=$(kt_db_name "$db_uri")
topic=$(kt_new_topic toolarge 2)
produce() {  # produce PARTITION FILE: one record per line, one batch per record
  kcat -b "$KT_BROKERS" -P -t "$topic" -p "$1" -X linger.ms=0 -X batch.num.messages=1 \
    -l "$2" || fail "kcat -P $*"
}
for i in 0 1 2; do printf '2017-07-30 14:0%d:00 ERROR small %d\n' "$i" "$i"; done > "$WORK/small"
produce 0 "$WORK/small"
{ printf '2017-07-30 14:05:00 ERROR first\n2017-07-30 14:06:00 ERROR '
  head -c 20000 /dev/zero | tr '\0' x; printf '\n'; } > "$WORK/big"
produce 1 "$WORK/big"
printf '2017-07-30 14:00:00\t1\n2017-07-30 14:01:00\t1\n2017-07-30 14:02:00\t1\n2017-07-30 14:05:00\t1\n2017-07-30 14:06:00\t1\n' \
  > "$WORK/truth"
[[ $(kcat -b "$KT_BROKERS" -C -t "$topic" -e -q -f '%p\n' | sort | uniq -c | awk '{ print $1 }' | paste -sd,) == 3,2 ]] \
  || fail "the topic does not hold 3 and 2 records"

# Answers over 2,000 bytes refused by the client (fetch.max.bytes must stay
# 512 below, and at least message.max.bytes).
small=(-X message.max.bytes=1000 -X fetch.max.bytes=1000 -X receive.message.max.bytes=2000)
start=$SECONDS rc=0
timeout 25 "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --interval 0 \
  --exit-when-idle "${small[@]}" --log-format json > "$WORK/out" 2> "$WORK/err" || rc=$?
took=$((SECONDS - start))
[[ $rc == 3 ]] || { tail -3 "$WORK/err" >&2; fail "exit $rc after ${took} s, expected 3 at once"; }
((took <= 15)) || fail "it took $took s to give up"
jq -r 'select(.level != "info" and .level != "debug" and .level != "warning") | .message' \
  "$WORK/err" > "$WORK/fatal"
[[ $(wc -l < "$WORK/fatal") == 1 ]] && kt_log_has exit "$WORK/err" \
  || { cat "$WORK/err" >&2; fail "not one error record"; }
# Partition 0 is named too when it shares the leader: the answer that is
# too large carries both, and which batch makes it so is not knowable.
grep -q "cannot read \($topic/0 from offset [0-3], \)\?$topic/1 from offset 1: .*receive.message.max.bytes.*raise -X receive.message.max.bytes" "$WORK/fatal" \
  || fail "the error does not name $topic/1, offset 1 and the property: $(cat "$WORK/fatal")"
if kt_log_has retry "$WORK/err"; then fail "the batch was retried: $(grep '"retry"' "$WORK/err")"; fi
[[ $(kt_offset_sum "$db" "$topic") == 0 ]] || fail "offsets were committed past the record"

# Raised: everything counted, exactly.
"$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --interval 0 \
  --exit-when-idle -X receive.message.max.bytes=20000000 \
  2> "$WORK/err2" || { cat "$WORK/err2" >&2; fail "the run with the property raised failed"; }
kt_check_counts "$db" "$WORK/truth"
[[ $(kt_offset_sum "$db" "$topic") == 5 ]] || fail "offsets do not add up to 5"
note "$TEST_NAME: stopped after $took s naming $topic/1 offset 1; exact once raised"
