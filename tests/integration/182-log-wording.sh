#!/usr/bin/env bash
# What the log says, in words people read: a batch of one is "1 partition,
# 1 record, 1 line, ..., 1 minute bucket" (it said "1 minutes"), and so is
# the summary of a run or replay of one ("1 record, 1 line", not "1 lines"); eight
# partitions seen for the first time are one line, not eight "is new"
# lines; SIGTERM is said when it comes ("stopping after the batch in
# flight"), and so is the end of an outage ("MySQL back after 3.2 s"),
# whose event spells its cause as the retry events do ("mysql": it was
# "MySQL", red before); a clean SIGTERM ends the log with a "stopped"
# record of what the run did; a committed batch is named by its audit id
# (what `reset --to batch:ID` takes), the loop's turn being a field apart.
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

db_uri=$(kt_new_db wording); db=$(kt_db_name "$db_uri")
topic=$(kt_new_topic wording 8)
mysql_down=no
trap '[[ $mysql_down == yes ]] && "$KT_SERVICES" restart-mysql > /dev/null 2>&1; kt_cleanup' EXIT

printf '2017-07-30 14:09:08 ERROR one\n' | kcat -b "$KT_BROKERS" -P -t "$topic" -p 3
"$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --exit-when-idle \
  --interval 0 2> "$WORK/one.log" || { cat "$WORK/one.log" >&2; fail "run failed"; }
grep -q "job $topic: batch 1: 1 partition, 1 record, 1 line, 1 ERROR, 0 malformed, 1 minute bucket, " \
  "$WORK/one.log" || { cat "$WORK/one.log" >&2; fail "a batch of one is not said in the singular"; }
grep -q "job $topic: done: 1 record, 1 line, 1 ERROR, 0 malformed in " "$WORK/one.log" \
  || { cat "$WORK/one.log" >&2; fail "the run's summary of one is not said in the singular"; }
"$KTALLY" replay --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --from 3:0 --until 3:1 \
  2> "$WORK/replay.log" || { cat "$WORK/replay.log" >&2; fail "the replay of one failed"; }
grep -q "replay [^ ]*: done: 1 record, 1 line, 1 ERROR, 0 malformed added to " "$WORK/replay.log" \
  || { cat "$WORK/replay.log" >&2; fail "the replay's summary of one is not said in the singular"; }
[[ $(grep -c "new partition" "$WORK/one.log") == 1 ]] && ! grep -q "is new" "$WORK/one.log" \
  || { cat "$WORK/one.log" >&2; fail "not one line for the new partitions"; }
grep -q "job $topic: 8 new partitions of $topic (0-7): starting at their earliest offsets, 1 offset to read" \
  "$WORK/one.log" || { cat "$WORK/one.log" >&2; fail "the new partitions' line"; }
printf '2017-07-30 14:09:08 ERROR two\n2017-07-30 15:09:08 ERROR three\n' \
  | kcat -b "$KT_BROKERS" -P -t "$topic" -p 0
"$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$(kt_new_db hourly)" --exit-when-idle \
  --interval 0 --bucket 1h 2> "$WORK/hour.log" \
  || { cat "$WORK/hour.log" >&2; fail "run --bucket 1h failed"; }
grep -q "batch 1: 2 partitions, 3 records, 3 lines, 3 ERROR, 0 malformed, 2 hour buckets, " "$WORK/hour.log" \
  || { cat "$WORK/hour.log" >&2; fail "hour buckets are not called so"; }

# A service: MySQL dies and comes back, then SIGTERM.
"$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --interval 0.2 \
  --log-format json 2> "$WORK/svc.log" &
pid=$!; KT_CHILDREN+=("$pid")
kt_wait_for 20 kt_log_has batch "$WORK/svc.log" || kt_wait_for 20 grep -q '"reading ' "$WORK/svc.log" \
  || { cat "$WORK/svc.log" >&2; fail "the service did not start"; }
"$KT_SERVICES" kill-mysql > /dev/null; mysql_down=yes
kt_wait_for 30 kt_log_has retry "$WORK/svc.log" || fail "no batch failed with MySQL down"
"$KT_SERVICES" restart-mysql > /dev/null; mysql_down=no
kt_wait_for 90 kt_log_has recovered "$WORK/svc.log" || { tail -5 "$WORK/svc.log" >&2; fail "the end of the outage was not said"; }
# One spelling of the cause for machines: the retry events' and the
# metrics' (it was "mysql" in retry events and "MySQL" in this one).
kt_log_match '.event == "retry" and .cause == "mysql"' "$WORK/svc.log" \
  || { grep '"retry"' "$WORK/svc.log" >&2; fail "no retry event with cause mysql"; }
kt_log_match '.event == "recovered" and .cause == "mysql" and .failed >= 1 and .duration > 0
              and (.message | test("^job [^ ]+: MySQL back after [0-9.]+ s \\([0-9]+ failed batch(es)?\\)$"))' \
  "$WORK/svc.log" || { grep recovered "$WORK/svc.log" >&2; fail "the recovery line"; }
kt_stop "$pid" TERM || fail "exit $? on SIGTERM"
kt_log_match '.event == "signal" and .signal == "SIGTERM"
              and .message == "SIGTERM received: stopping after the batch in flight (it commits whole or not at all)"' \
  "$WORK/svc.log" || { tail -3 "$WORK/svc.log" >&2; fail "SIGTERM was not said"; }
# A clean stop ends with its own record: what the run did (red before:
# the log just ended after the signal's line).
tail -1 "$WORK/svc.log" | jq -e --arg j "$topic" '.event == "stopped" and .job == $j and .records >= 2
    and (.message | test("^job [^ ]+: stopped: [0-9]+ records?, .* in [0-9.]+ s \\(the batch in flight committed whole or not at all\\)$"))' > /dev/null \
  || { tail -3 "$WORK/svc.log" >&2; fail "no stopped record last after SIGTERM"; }
kt_check_counts "$db" <(printf '2017-07-30 14:09:00\t2\n2017-07-30 15:09:00\t1\n')

# A committed batch is named by its audit id, the one `reset --to
# batch:ID` takes, not by the loop's turn (idle turns before it counted:
# red before, "batch 14" named audit row 1); the turn is a field of its own.
ids=$(kt_new_topic wording_ids 2)
ids_uri=$(kt_new_db wording_ids); ids_db=$(kt_db_name "$ids_uri")
"$KTALLY" run --brokers "$KT_BROKERS" --topic "$ids" --db "$ids_uri" --mode idempotent \
  --interval 0.1 --verbose --log-format json 2> "$WORK/ids.log" &
pid=$!; KT_CHILDREN+=("$pid")
idle_turns() { (($(grep -c "nothing new" "$WORK/ids.log") >= 3)); }
kt_wait_for 20 idle_turns || { tail -5 "$WORK/ids.log" >&2; fail "no idle turns"; }
batches_logged() { (($(kt_log_count batch "$WORK/ids.log") >= $1)); }
printf '2017-07-30 14:09:08 ERROR a\n2017-07-30 15:09:08 ERROR b\n' | kcat -b "$KT_BROKERS" -P -t "$ids" -p 1
kt_wait_for 20 batches_logged 1 || fail "no first batch"
printf '2017-07-30 14:09:09 ERROR c\n' | kcat -b "$KT_BROKERS" -P -t "$ids" -p 1
kt_wait_for 20 batches_logged 2 || fail "no second batch"
kt_stop "$pid" || fail "exit $? on SIGTERM"
jq -c 'select(.event == "batch") | [.batch, .turn, .message]' "$WORK/ids.log" > "$WORK/ids.batches"
[[ $(jq -r '.[0]' "$WORK/ids.batches" | paste -sd ' ') == \
   "$(kt_sql "$ids_db" "SELECT id FROM ktally_batches WHERE job = '$ids' ORDER BY id" | paste -sd ' ')" ]] \
  || { cat "$WORK/ids.batches" >&2; fail "the batch records do not carry the audit ids"; }
jq -se --arg j "$ids" 'all(.[]; .[1] > .[0] and (.[2] | startswith("job \($j): batch ")))
    and all(.[]; . as $b | $b[2] | startswith("job \($j): batch \($b[0]): "))' "$WORK/ids.batches" > /dev/null \
  || { cat "$WORK/ids.batches" >&2; fail "the line does not say the audit id, or the turn is not a field of its own"; }
second=$(jq -r '.[0]' "$WORK/ids.batches" | tail -1)
"$KTALLY" reset --brokers "$KT_BROKERS" --db "$ids_uri" --job "$ids" --to "batch:$second" > "$WORK/reset.out" \
  || fail "reset --to batch:$second (the logged id) refused"
grep -Eq "^ +1 +3 +0 +3 +2 +back" "$WORK/reset.out" || { cat "$WORK/reset.out" >&2; fail "reset --to batch:$second does not go back to where that batch started"; }

note "$TEST_NAME: singular and plural, minute and hour buckets, one line for 8 new partitions, SIGTERM said; $(jq -r 'select(.event == "recovered") | .message' "$WORK/svc.log")"
