#!/usr/bin/env bash
# `ktally reset --to earliest --rebuild`: the only way back for a
# transactional job. Its table is emptied, its audit rows dropped and every
# partition rewound to its log start, in one transaction, fenced: executed
# twice while two members of a --group job run and data flows, the counts
# end equal to kt-gen's truth, each line once. Refused (exit 2, nothing
# changed) where it cannot be exact: a table another job, a replay or a
# forgotten job counted into too; offsets the job counted that retention
# removed since (unless --accept-data-loss); a ledger, which moves forward
# only.
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

db_uri=$(kt_new_db rebuild); db=$(kt_db_name "$db_uri")
topic=$(kt_new_topic rebuild 6)
job=g$RUN_ID
reset() { "$KTALLY" reset --brokers "$KT_BROKERS" --db "$db_uri" "$@"; }
refused() {  # refused WHAT ARGS...: reset ARGS is exit 2, one line naming WHAT
  local what=$1 rc=0; shift
  reset "$@" > "$WORK/out" 2> "$WORK/err" || rc=$?
  ((rc == 2)) || { cat "$WORK/out" "$WORK/err" >&2; fail "reset $* exited $rc, not 2"; }
  [[ $(grep -c . "$WORK/err") == 1 ]] || { cat "$WORK/err" >&2; fail "reset $*: not one line"; }
  grep -qF -- "$what" "$WORK/err" || { cat "$WORK/err" >&2; fail "reset $*: does not say '$what'"; }
  # A dry run refuses alike (not where --execute is the mistake).
  [[ " $* " != *" --execute "* || " $* " == *" --dry-run "* ]] || kt_dry_run_alike "$rc" "$WORK/err" reset "$@"
}
snapshot() {
  kt_sql "$1" "SELECT job, topic, \`partition\`, \`offset\` FROM kafka_offset ORDER BY 1, 2, 3;
               SELECT COUNT(*), COALESCE(SUM(log_count), 0) FROM error_log;
               SELECT COUNT(*) FROM ktally_batches"
}

# 1. Two members of a group, data flowing, two rebuilds.
fast=(-X session.timeout.ms=6000 -X heartbeat.interval.ms=500)
member() {
  "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --job "$job" \
    --group "gr$RUN_ID" --interval 0.1 --max-per-partition 300 "${fast[@]}" 2>> "$WORK/member$1.log" &
  pids[$1]=$!; KT_CHILDREN+=($!)
}
offsets_at_least() { local n; n=$(kt_offset_sum "$db" "$job" 2> /dev/null) || return 1; ((n >= $1)); }
kt_gen "$topic" --lines 16000 --seed 1630 --rate 8000 --truth "$WORK/truth" > /dev/null &
gen=$!; KT_CHILDREN+=("$gen")
declare -a pids=()
member 0; member 1
kt_wait_for 30 offsets_at_least 2000 || fail "the group does not commit"
reset --job "$job" --to earliest --rebuild --execute > "$WORK/r1" 2>&1 || { cat "$WORK/r1" >&2; fail "rebuild 1 failed"; }
grep -q "^deleted every row of error_log" "$WORK/r1" || { cat "$WORK/r1" >&2; fail "rebuild 1 does not say what it deleted"; }
kt_wait_for 30 offsets_at_least 4000 || fail "the group does not go on after the rebuild"
reset --job "$job" --to earliest --rebuild --execute > "$WORK/r2" 2>&1 || { cat "$WORK/r2" >&2; fail "rebuild 2 failed"; }
wait "$gen" || fail "kt-gen failed"
kt_wait_for 60 offsets_at_least 16000 || fail "the group did not reach the high watermarks"
for i in 0 1; do kt_stop "${pids[$i]}" || fail "member $i did not exit 0"; done
kt_check_counts "$db" "$WORK/truth"
kt_audit "$db_uri"
fenced=$(cat "$WORK"/member*.log | grep -c "fenced" || true)

# 2. What cannot be rebuilt exactly is refused, nothing changed.
before=$(snapshot "$db")
refused "--rebuild counts again what the job counted from where it goes back to: not with --to latest" \
  --job "$job" --to latest --rebuild
refused "--rebuild empties the job's whole output" --job "$job" --to earliest --rebuild --topic "$topic"
refused "--accept-data-loss goes with --rebuild only" --job "$job" --to latest --accept-data-loss
# A replay into error_log: its counts are in the table too.
"$KTALLY" replay --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --from 0:0 --until 0:10 \
  --table error_log 2>> "$WORK/replay.log" || fail "the replay failed"
before=$(snapshot "$db")
refused "error_log also holds what replay." --job "$job" --to earliest --rebuild --execute
[[ $(snapshot "$db") == "$before" ]] || fail "a refused rebuild changed the database"
# A second job over other partitions of the topic (--share-table), in a
# database of its own: the two write one table.
sdb_uri=$(kt_new_db rebuild_share); sdb=$(kt_db_name "$sdb_uri")
for half in 0-2:a 3-5:b; do
  "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$sdb_uri" --job "${half#*:}$RUN_ID" \
    --partitions "${half%:*}" --share-table --interval 0 --exit-when-idle 2>> "$WORK/share.log" \
    || fail "the --share-table run failed"
done
before=$(snapshot "$sdb")
refused "error_log also holds what b$RUN_ID counted" --db "$sdb_uri" --job "a$RUN_ID" --to earliest \
  --rebuild --execute
[[ $(snapshot "$sdb") == "$before" ]] || fail "a refused rebuild changed the database"
# Once b is forgotten, its counts still are in the table.
"$KTALLY" forget --db "$sdb_uri" --job "b$RUN_ID" --execute > /dev/null || fail "forget b failed"
refused "error_log also holds what a forgotten job (ktally_forgotten) counted" \
  --db "$sdb_uri" --job "a$RUN_ID" --to earliest --rebuild --execute
kt_audit "$sdb_uri"

# 3. Retention took offsets the job counted: refused unless accepted.
ltopic=$(kt_new_trimmed_topic rebuild_loss 1)
ldb_uri=$(kt_new_db rebuild_loss); ldb=$(kt_db_name "$ldb_uri")
kt_gen "$ltopic" --lines 2000 --seed 1631 > /dev/null || fail "kt-gen failed"
"$KTALLY" run --brokers "$KT_BROKERS" --topic "$ltopic" --db "$ldb_uri" --interval 0 --exit-when-idle \
  2>> "$WORK/loss.log" || fail "the run failed"
kt_gen "$ltopic" --lines 300000 --lines-per-value 50 --seed 1632 > /dev/null || fail "kt-gen failed"
low=$(kt_wait_trimmed "$ltopic" 0 0)
before=$(snapshot "$ldb")
refused "offsets [0, $low) are gone" --db "$ldb_uri" --job "$ltopic" --to earliest --rebuild --execute
[[ $(snapshot "$ldb") == "$before" ]] || fail "the refused rebuild changed the database"
reset --db "$ldb_uri" --job "$ltopic" --to earliest --rebuild --accept-data-loss > "$WORK/loss" \
  || fail "the accepted dry run failed"
grep -q "\[0, $low) gone to retention: no longer counted" "$WORK/loss" || { cat "$WORK/loss" >&2; fail "the loss is not said"; }
reset --db "$ldb_uri" --job "$ltopic" --to 0:$((low - 1)) > /dev/null 2> "$WORK/err" && fail "a move below the log start was taken"
grep -q "is below the log start $low" "$WORK/err" || { cat "$WORK/err" >&2; fail "below the log start: not said"; }

# 4. A ledger moves forward only.
KT_LEDGER_GEN=$KT_BUILD/tests/support/kt-ledger-gen
ledger=$(kt_new_topic rebuild_ledger 2)
"$KT_LEDGER_GEN" --brokers "$KT_BROKERS" --topic "$ledger" --messages 400 --accounts 10 --seed 1633 \
  > /dev/null || fail "kt-ledger-gen failed"
"$KTALLY" run --kind ledger --brokers "$KT_BROKERS" --topic "$ledger" --db "$ldb_uri" --interval 0 \
  --exit-when-idle 2>> "$WORK/ledger.log" || fail "the ledger run failed"
before=$(snapshot "$ldb")
refused "job $ledger cannot move back ($ledger/0 from " --db "$ldb_uri" --job "$ledger" --to earliest --execute
grep -q "to 0): a ledger's audit chain cannot go back" "$WORK/err" || { cat "$WORK/err" >&2; fail "no reason given"; }
refused "--rebuild: job $ledger (--kind ledger) cannot be rebuilt" \
  --db "$ldb_uri" --job "$ledger" --to earliest --rebuild --execute
[[ $(snapshot "$ldb") == "$before" ]] || fail "a refused ledger reset changed the database"
"$KT_LEDGER_GEN" --brokers "$KT_BROKERS" --topic "$ledger" --messages 100 --accounts 10 --seed 1634 \
  > /dev/null || fail "kt-ledger-gen failed"
reset --db "$ldb_uri" --job "$ledger" --to latest --execute > /dev/null || fail "a ledger forward failed"
[[ $(kt_offset_sum "$ldb" "$ledger") == 500 ]] || fail "the ledger did not move forward"
kt_audit "$ldb_uri"
note "$TEST_NAME: 2 rebuilds under 2 live --group members exact ($fenced fenced batches); shared, replayed, forgotten, lost and ledger refused"
