#!/usr/bin/env bash
# A read that a cap stops early commits exactly what it read, and the next
# batch goes on from there: the byte cap (--max-batch-bytes), and the bound
# on records carried past their ranges (the queue's record cap,
# queued.min.messages), which keeps memory flat when some partitions hold
# far more than others. A skewed topic, both caps small, kill -9 meanwhile:
# the counts stay exact and the audit chain whole, and each cap stopped a
# read. The carried bound is made to bind: one partition's leader answers
# late (the mock's rtt), and while a batch waits for that range the other
# partitions' fetchers go on past theirs. Red before (flaky under ASan,
# "carried: the cap never stopped a read"): with every leader as fast,
# the partitions' fetches go round together and whether 1,000 records got
# carried past their ranges before the last range ended was a race. A
# leader 500 ms away was never heard from at all (its ListOffsets asked
# anew every 500 ms): red before too.
# broker: mock — one partition's leader slowed down (the mock's rtt), which a real broker cannot be told
source "$(dirname "$0")/lib.sh"

topic=$(kt_new_topic caps 4)
# Even over 4 partitions, then as much again into partition 0 alone.
kt_gen "$topic" --lines 40000 --seed 95 --truth "$WORK/t1" > "$WORK/gen1"
kt_gen "$topic" --lines 40000 --seed 96 --partition 0 --truth "$WORK/t2" > "$WORK/gen2"
kt_sum_truths "$WORK/t1" "$WORK/t2" > "$WORK/truth"
total=80000

check() {  # check NAME CAP ARGS...: kill -9 a few times, then to idle
  local name=$1 cap=$2; shift 2
  local db_uri db k
  db_uri=$(kt_new_db "caps_$name"); db=$(kt_db_name "$db_uri")
  local run=(run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --interval 0 --verbose --log-format json "$@")
  for ((k = 0; k < 4; k++)); do
    kt_kill9 100 400 "$WORK/$name.log" "$KTALLY" "${run[@]}" || true
  done
  "$KTALLY" "${run[@]}" --exit-when-idle 2>> "$WORK/$name.log" \
    || { grep -v debug "$WORK/$name.log" | tail -5 >&2; fail "$name: the final run failed"; }
  kt_check_counts "$db" "$WORK/truth"
  kt_audit "$db_uri"
  [[ $(kt_offset_sum "$db" "$topic") == "$total" ]] || fail "$name: stored offsets do not add up to $total"
  kt_log_match ".event == \"read-stopped\" and .cap == \"$cap\"" "$WORK/$name.log" \
    || fail "$name: the cap never stopped a read"
  note "$TEST_NAME: $name: exact, $(kt_log_count read-stopped "$WORK/$name.log") reads stopped early"
}

# 200 kB of values per batch at most.
check bytes bytes --max-batch-bytes 200000
# Partitions 1-3 are done after 2,000 records each while partition 0's
# leader answers 500 ms late: what the fetchers bring for partitions 1-3
# meanwhile (4,000 more each in their logs) is carried, at most 1,000
# records, and the read stops there.
topic=$(kt_new_topic caps_carried 4)
for p in 0 1 2 3; do
  kt_ctl leader "$topic" "$p" $((p == 0 ? 1 : 2 + p % 2)) > /dev/null || fail "cannot pin the leader of $topic/$p"
done
kt_gen "$topic" --lines 3000 --seed 97 --partition 0 --truth "$WORK/c0" > /dev/null || fail "kt-gen failed"
for p in 1 2 3; do
  kt_gen "$topic" --lines 6000 --seed $((97 + p)) --partition "$p" --truth "$WORK/c$p" > /dev/null \
    || fail "kt-gen failed"
done
kt_sum_truths "$WORK"/c[0-3] > "$WORK/truth"
trap 'kt_ctl rtt 1 0 > /dev/null 2>&1; kt_cleanup' EXIT  # the broker is the suite's
kt_ctl rtt 1 500 > /dev/null || fail "cannot slow broker 1 down"
total=21000
check carried carried --max-per-partition 2000 -X queued.min.messages=1000
kt_ctl rtt 1 0 > /dev/null || fail "cannot restore broker 1's rtt"
# And planning never failed for the slow leader: its ListOffsets answers
# come 500 ms late. Red before: each 500 ms wait asked anew, so no answer
# was ever taken ("cannot get the offsets ...: Local: Timed out", retried
# with backoff; the 21,000 records took 306 s instead of 7).
! kt_log_has retry "$WORK/carried.log" \
  || fail "carried: a batch was retried: $(jq -Rr 'fromjson? | select(.event == "retry") | .message' "$WORK/carried.log" | head -1)"
