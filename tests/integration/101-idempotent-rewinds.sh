#!/usr/bin/env bash
# Idempotent mode under rewinds, restarts and its own start: every offset is
# counted once, whatever the stored offsets are moved to.
#  - --start latest on a partition that already holds 12,345 records, 1,000
#    more, then the stored offsets rewound to 0 (before, the first chunk
#    started off the chunk grid, and the rewind wrote a second, overlapping
#    chunk: 4,106 counted against 3,823), to the middle of what was counted,
#    and to an odd offset;
#  - --offsets kafka --start latest (before, "latest" was decided again at
#    every batch and nothing was ever read);
#  - an open chunk larger than --max-batch-bytes after a restart (before,
#    the restart read the chunk again from its start, the byte cap cut the
#    read below the stored offset, and every batch repeated for ever).
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

idle() {  # idle DB_URI TOPIC ARGS...: one run to idle, bounded in time
  local uri=$1 topic=$2; shift 2
  timeout 60 "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$uri" \
    --mode idempotent --interval 0 --exit-when-idle "$@" 2>> "$WORK/run.log" \
    || { local rc=$?; tail -5 "$WORK/run.log" >&2; fail "run $* on $topic failed or hung (exit $rc)"; }
}

# 1. --start latest, more data, rewinds.
db_uri=$(kt_new_db idem_rw); db=$(kt_db_name "$db_uri")
topic=$(kt_new_topic idem_rw 2)
kt_gen "$topic" --lines 24690 --partitions 2 --seed 11 --truth "$WORK/old.truth" > /dev/null || fail "kt-gen failed"
idle "$db_uri" "$topic" --start latest
[[ $(kt_sql "$db" "SELECT COUNT(*) FROM error_log") == 0 ]] || fail "--start latest counted old records"
kt_gen "$topic" --lines 2000 --partitions 2 --seed 12 --start "2019-01-01 00:00:00" \
  --truth "$WORK/new.truth" > /dev/null || fail "kt-gen failed"
idle "$db_uri" "$topic" --max-per-partition 700
kt_check_counts "$db" "$WORK/new.truth"
kt_sum_truths "$WORK/old.truth" "$WORK/new.truth" > "$WORK/all.truth"
for rewind in 0 5000 12344 6173; do
  kt_sql "$db" "UPDATE kafka_offset SET \`offset\` = $rewind WHERE job = '$topic'"
  idle "$db_uri" "$topic" --max-per-partition 3000
  kt_check_counts "$db" "$WORK/all.truth"
  [[ $(kt_offset_sum "$db" "$topic") == 26690 ]] || fail "after a rewind to $rewind the offsets are $(kt_offset_sum "$db" "$topic")"
done
kt_audit "$db_uri"

# 2. --offsets kafka --start latest: decided once, so the next records count.
kdb_uri=$(kt_new_db idem_kl); kdb=$(kt_db_name "$kdb_uri")
idle "$kdb_uri" "$topic" --offsets kafka --start latest --job "kl$RUN_ID"
kt_gen "$topic" --lines 300 --partitions 2 --seed 13 --start "2020-01-01 00:00:00" \
  --truth "$WORK/k.truth" > /dev/null || fail "kt-gen failed"
idle "$kdb_uri" "$topic" --offsets kafka --start latest --job "kl$RUN_ID" --max-per-partition 60
kt_check_counts "$kdb" "$WORK/k.truth"
# audit --brokers also checks where such a job's chain ends: at the group's
# committed offsets (without it, it cannot know them).
"$KTALLY" audit --db "$kdb_uri" --brokers "$KT_BROKERS" > "$WORK/ka.out" 2>&1 || { cat "$WORK/ka.out" >&2; fail "audit --brokers failed"; }
kt_sql "$kdb" "DELETE FROM ktally_batches WHERE \`partition\` = 1 ORDER BY id DESC LIMIT 1"
rc=0; "$KTALLY" audit --db "$kdb_uri" --brokers "$KT_BROKERS" > "$WORK/ka.out" 2>&1 || rc=$?
[[ $rc == 5 ]] && grep -q "are in no batch, below the stored offset" "$WORK/ka.out" \
  || { cat "$WORK/ka.out" >&2; fail "audit --brokers: exit $rc, no gap below the group's offset"; }
rc=0; "$KTALLY" audit --db "$kdb_uri" > "$WORK/ka.out" 2>&1 || rc=$?
[[ $rc == 5 ]] && ! grep -q "below the stored offset" "$WORK/ka.out" || { cat "$WORK/ka.out" >&2; fail "audit without --brokers knew the group's offset"; }

# 3. An open chunk far larger than --max-batch-bytes, then a restart.
cdb_uri=$(kt_new_db idem_cap); cdb=$(kt_db_name "$cdb_uri")
ctopic=$(kt_new_topic idem_cap 1)
kt_gen "$ctopic" --lines 60000 --lines-per-value 25 --seed 14 --truth "$WORK/c1.truth" > /dev/null || fail "kt-gen failed"
idle "$cdb_uri" "$ctopic" --max-batch-bytes 200000
kt_gen "$ctopic" --lines 2500 --lines-per-value 25 --seed 15 --start "2021-01-01 00:00:00" \
  --truth "$WORK/c2.truth" > /dev/null || fail "kt-gen failed"
idle "$cdb_uri" "$ctopic" --max-batch-bytes 200000
kt_sum_truths "$WORK/c1.truth" "$WORK/c2.truth" > "$WORK/c.truth"
kt_check_counts "$cdb" "$WORK/c.truth"
kt_audit "$cdb_uri"
note "$TEST_NAME: --start latest and rewinds to 0, 5000, 12344, 6173; --offsets kafka --start latest; an open chunk over the byte cap: exact"
