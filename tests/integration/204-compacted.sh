#!/usr/bin/env bash
# A compacted topic (cleanup.policy=compact, a segment a second, the
# cleaner made to run; KT_MODE transactional or idempotent): keyed records
# whose keys are written again later, so that compaction leaves holes at
# the start, in the middle and at the end of the job's first range of each
# partition (--max-per-partition 100: [0, 100) with [0, 10), [40, 50) and
# [90, 100) gone), the end hole being where a reader that waits for the
# range's last offset never gets it. The job counts exactly the records
# that exist and stores its offsets at the ends; replays whose --from or
# --until fall in holes count exactly the records between them; `ktally
# audit` adds up. Red if a run hangs or fails at a hole, counts a record
# that compaction removed, misses one that exists, or a replay reads past
# its bounds, or a run stops (or checks nothing) when the record it
# counted last is compacted away (its anchor: it cannot be compared).
# broker: apache — only a real broker compacts a log (the mock keeps every record of a topic)
source "$(dirname "$0")/lib.sh"

mode=${KT_MODE:-transactional}
# Kafka 4 refuses segment.bytes below 1 MB: segments roll by time instead.
topic=$(kt_new_topic compacted 2 --config cleanup.policy=compact --config segment.ms=1000 \
  --config min.cleanable.dirty.ratio=0.01 --config min.compaction.lag.ms=0 \
  --config delete.retention.ms=100)
db_uri=$(kt_new_db compacted); db=$(kt_db_name "$db_uri")

# Per partition, offset: key|value. A: 100 ERROR lines, keys a0..a99, line
# i at 14:MM with MM = i / 10; B (offsets 100-129): the keys of [0, 10),
# [40, 50) and [90, 100) again, ERROR lines at 15:MM; C (130): one INFO
# line that closes B's segment, which the cleaner needs to see B's keys.
for ((i = 0; i < 100; i++)); do printf 'a%d|2017-07-30 14:%02d:%02d ERROR a\n' $i $((i / 10)) $((i % 60)); done > "$WORK/A"
for i in $(seq 0 9) $(seq 40 49) $(seq 90 99); do echo "a$i"; done \
  | awk '{ printf "%s|2017-07-30 15:%02d:%02d ERROR b\n", $1, int((NR - 1) / 10), (NR - 1) % 60 }' > "$WORK/B"
echo "c|2017-07-30 16:00:00 INFO c" > "$WORK/C"
cat "$WORK/A" "$WORK/B" "$WORK/C" | awk '{ print NR - 1 "|" $0 }' > "$WORK/records"  # offset|key|value
produce() {  # produce FILE: its lines into both partitions, in order
  local p
  for p in 0 1; do
    kcat -b "$KT_BROKERS" -P -t "$topic" -p "$p" -K '|' -X enable.idempotence=true < "$1" \
      || fail "kcat could not produce $1 into partition $p"
  done
}
produce "$WORK/A"; sleep 1.2
produce "$WORK/B"; sleep 1.2
produce "$WORK/C"
# What compaction leaves: each key's last record (C's segment, the active
# one, is never cleaned; it holds only its own key).
awk -F'|' '{ last[$2] = $1; line[$1] = $0 } END { for (o in line) { split(line[o], f, "|"); if (last[f[2]] == o) print line[o] } }' \
  "$WORK/records" | sort -t'|' -k1,1n > "$WORK/survivors"
[[ $(wc -l < "$WORK/survivors") == 101 ]] || fail "the oracle expects $(wc -l < "$WORK/survivors") survivors, not 101"
remaining() { kcat -b "$KT_BROKERS" -C -t "$topic" -p "$1" -o beginning -e -q | wc -l; }
compacted() { [[ $(remaining 0) == 101 && $(remaining 1) == 101 ]]; }
kt_wait_for 40 compacted || fail "the cleaner did not compact $topic within 40 s: $(remaining 0) and $(remaining 1) records left of 131"
kcat -b "$KT_BROKERS" -C -t "$topic" -p 0 -o beginning -e -q -f '%o\n' > "$WORK/offsets"
awk -F'|' '{ print $1 }' "$WORK/survivors" | cmp -s - "$WORK/offsets" \
  || fail "compaction left other offsets than the oracle's: $(tr '\n' ' ' < "$WORK/offsets" | head -c 300)"

truth() {  # truth FROM UNTIL: per-minute ERROR counts of the survivors in [FROM, UNTIL) of both partitions
  awk -F'|' -v a="$1" -v b="$2" '$1 >= a && $1 < b && $3 ~ / ERROR / { n[substr($3, 1, 16) ":00"] += 2 }
    END { for (m in n) printf "%s\t%d\n", m, n[m] }' "$WORK/survivors" | sort
}
truth 0 131 > "$WORK/all"
"$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --mode "$mode" --interval 0 \
  --max-per-partition 100 --exit-when-idle --log-format json 2> "$WORK/run.log" &
pid=$!; KT_CHILDREN+=("$pid")
kt_wait_for 30 bash -c "! kill -0 $pid 2> /dev/null" || { kill -9 "$pid"; fail "the run hung at a hole (still running after 30 s)"; }
wait "$pid" || { tail -5 "$WORK/run.log" >&2; fail "the run failed"; }
kt_check_counts "$db" "$WORK/all"
[[ $(kt_sql "$db" "SELECT GROUP_CONCAT(\`offset\`) FROM kafka_offset WHERE topic = '$topic'") == "131,131" ]] \
  || fail "the stored offsets are not at the ends: $(kt_sql "$db" "SELECT \`partition\`, \`offset\` FROM kafka_offset")"
kt_log_match '.event == "batch" and .records == 140' "$WORK/run.log" \
  || { grep '"batch"' "$WORK/run.log" >&2; fail "the first batch did not read the 140 records of [0, 100) of both partitions"; }

# Replays with their bounds in holes: start in the start hole, end in the
# middle one; start in the middle hole, end in the end hole.
replay() {  # replay TABLE FROM UNTIL
  "$KTALLY" replay --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --table "$1" \
    --from "0:$2,1:$2" --until "0:$3,1:$3" 2> "$WORK/$1.log" || { cat "$WORK/$1.log" >&2; fail "replay $2-$3 failed"; }
  truth "$2" "$3" > "$WORK/$1.truth"
  kt_check_counts "$db" "$WORK/$1.truth" "$1"
}
replay r_start 5 45
replay r_end 42 95
replay r_tail 95 131
kt_audit "$db_uri"
note "$TEST_NAME ($mode): holes [0, 10), [40, 50), [90, 100) of each partition, 101 of 131 records left"

# The record the job counted last (its anchor, C at offset 130) removed
# by compaction in turn (D writes its key again, E closes D's segment): a
# run cannot compare it, and goes on (it must not take the hole for
# another log), counting D and E; it says so at debug level.
echo "c|2017-07-30 16:01:00 ERROR d" > "$WORK/D"
echo "e|2017-07-30 16:02:00 INFO e" > "$WORK/E"
produce "$WORK/D"; sleep 1.2
produce "$WORK/E"
anchor_gone() { [[ $(remaining 0) == 102 && $(remaining 1) == 102 ]]; }
kt_wait_for 40 anchor_gone || fail "the cleaner did not remove offset 130: $(remaining 0) and $(remaining 1) records left"
"$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --mode "$mode" --interval 0 \
  --exit-when-idle --log-format json --verbose 2> "$WORK/after.log" \
  || { grep -v '"debug"' "$WORK/after.log" | tail -3 >&2; fail "the run after its last record was compacted away failed"; }
kt_log_match '.event == "anchors" and .partitions == 2 and .unseen == 2' "$WORK/after.log" \
  || { grep '"anchors"' "$WORK/after.log" >&2; fail "the run did not pass over the 2 anchors compaction removed"; }
kt_sum_truths "$WORK/all" <(printf '2017-07-30 16:01:00\t2\n') > "$WORK/all2"
kt_check_counts "$db" "$WORK/all2"
note "$TEST_NAME ($mode): the anchors' records compacted away: passed over, D and E counted"
kt_admin delete "$topic"
