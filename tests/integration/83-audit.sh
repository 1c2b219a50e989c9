#!/usr/bin/env bash
# ktally audit: passes after real runs (transactional, idempotent, replay,
# --audit-keep folding old rows), and catches a gap, an overlap, a chain
# that stops short of the stored offset, and a total that does not agree.
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

db_uri=$(kt_new_db audit); db=$(kt_db_name "$db_uri")
idb_uri=$(kt_new_db auditi); idb=$(kt_db_name "$idb_uri")
topic=$(kt_new_topic audit 3)
kt_gen "$topic" --lines 30000 --seed 83 > /dev/null
run() { "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --interval 0 --exit-when-idle \
          --max-per-partition 1500 "$@" 2>> "$WORK/run.log" || fail "run $* failed"; }
run --db "$db_uri"
run --db "$idb_uri" --mode idempotent
"$KTALLY" replay --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --from 0:100,2:0 \
  --until 0:900,2:10000 2>> "$WORK/run.log" || fail "replay failed"
kt_audit "$db_uri"
kt_audit "$idb_uri"
grep -q "error_log: [0-9]* ERROR lines recorded by batches, [0-9]* in the table$" "$WORK/audit.out" \
  || fail "the idempotent audit did not compare error_log"

# --audit-keep folds old rows into one per partition: still whole.
rows_before=$(kt_sql "$db" "SELECT COUNT(*) FROM ktally_batches WHERE job = '$topic'")
sleep 1.1
kt_gen "$topic" --lines 3000 --seed 84 > /dev/null
run --db "$db_uri" --audit-keep 1s
rows_after=$(kt_sql "$db" "SELECT COUNT(*) FROM ktally_batches WHERE job = '$topic'")
((rows_after < rows_before)) || fail "--audit-keep kept $rows_after rows of $rows_before"
kt_audit "$db_uri"

broken() {  # broken PATTERN: the audit must fail, saying PATTERN
  local rc=0
  "$KTALLY" audit --db "$db_uri" --job "$topic" > "$WORK/audit.out" 2>&1 || rc=$?
  [[ $rc == 5 ]] || { cat "$WORK/audit.out" >&2; fail "audit: exit $rc on a broken chain, expected 5"; }
  grep -q -- "$1" "$WORK/audit.out" || { cat "$WORK/audit.out" >&2; fail "audit did not say '$1'"; }
}
key="job = '$topic' AND \`partition\` = 1"
last=$(kt_sql "$db" "SELECT MAX(from_offset) FROM ktally_batches WHERE $key")
kt_sql "$db" "UPDATE ktally_batches SET from_offset = from_offset + 1 WHERE $key AND from_offset = $last"
broken "gap: offsets \[$last, $((last + 1)))"
kt_sql "$db" "UPDATE ktally_batches SET from_offset = from_offset - 2 WHERE $key AND from_offset = $((last + 1))"
broken "overlap: offsets \[$((last - 1)), $last)"
kt_sql "$db" "UPDATE ktally_batches SET from_offset = $last WHERE $key AND from_offset = $((last - 1))"
kt_audit "$db_uri"
kt_sql "$db" "UPDATE kafka_offset SET \`offset\` = \`offset\` + 5 WHERE $key"
broken "the stored offset is"
kt_sql "$db" "UPDATE kafka_offset SET \`offset\` = \`offset\` - 5 WHERE $key"
kt_sql "$db" "UPDATE error_log SET log_count = log_count + 1 ORDER BY log_time LIMIT 1"
broken "error_log holds"
note "$TEST_NAME: whole after runs, replay and folding; gap, overlap, short chain and wrong total each caught"
