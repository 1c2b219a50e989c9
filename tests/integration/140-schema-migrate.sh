#!/usr/bin/env bash
# A database of schema version 1 (ktally before schema versions: its DDL is
# kept in schema-v1/), filled by a real run, is migrated by `ktally run` at
# start, stays exact and keeps counting: transactional mode with a replay
# table, idempotent mode, and the ledger. Before that, `status` and `audit`
# read it as it is and alter nothing. After it, its shape
# (information_schema: tables, columns, types, collations, keys) equals a
# freshly created database's.
#
# Version 1's rows come from a run of this ktally into a scratch database,
# copied into the version-1 tables: the rows a run writes are the same in
# both versions (the server runs in UTC, so committed_at is too), except
# idempotent mode's, where version 1 kept chunks: those are made from the
# run's per-partition counts and covered sets.
#
# Before the migration, `init-db --dry-run` lists every pending migration
# and the tables it would touch (ktally_batches altered and updated by
# version 2 with its row count, the replay table widened, ktally_job
# created by version 3) and alters nothing; after it, nothing is pending.
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"
source "$KT_SRC/tests/integration/schema-v1/lib.sh"

run() {  # run DB_URI LOG ARGS...: ktally run to idle
  local uri=$1 log=$2; shift 2
  "$KTALLY" run --brokers "$KT_BROKERS" --db "$uri" --interval 0 --exit-when-idle --log-format json \
    "$@" 2>> "$log" \
    || { tail -5 "$log" >&2; fail "a run on $(kt_db_name "$uri") failed"; }
}
migrations() { kt_log_count_if '.event == "migrate" and .from == 1' "$1"; }

# --- transactional, with a replay table ---------------------------------
topic=$(kt_new_topic migrate 3)
kt_gen "$topic" --lines 6000 --seed 140 --truth "$WORK/t1" > /dev/null
scratch_uri=$(kt_new_db migrate_scratch); scratch=$(kt_db_name "$scratch_uri")
run "$scratch_uri" "$WORK/scratch.log" --topic "$topic" --max-per-partition 500
until0=$(kt_sql "$scratch" "SELECT \`offset\` FROM kafka_offset WHERE \`partition\` = 0")
replay=(replay --brokers "$KT_BROKERS" --topic "$topic" --table error_log_replay
        --from "0:0" --until "0:$until0")
"$KTALLY" "${replay[@]}" --db "$scratch_uri" 2>> "$WORK/scratch.log" || fail "scratch replay failed"

v1_uri=$(kt_v1_db migrate_v1 schema); v1=$(kt_db_name "$v1_uri")
kt_v1_replay_table "$v1" error_log_replay
kt_copy_rows "$scratch" "$v1" error_log kafka_offset ktally_batches error_log_replay
kt_shape "$v1" > "$WORK/v1_shape"

# status and audit read version 1 as it is, and say so.
"$KTALLY" status --brokers "$KT_BROKERS" --topic "$topic" --db "$v1_uri" --log-format json \
  > "$WORK/status.out" 2> "$WORK/status.log" || { cat "$WORK/status.log" >&2; fail "status on version 1 failed"; }
older='.event == "schema-older" and .version == 1'
kt_log_match "$older" "$WORK/status.log" || fail "status did not report the older schema"
"$KTALLY" audit --db "$v1_uri" --log-format json > "$WORK/audit.out" 2> "$WORK/audit.log" \
  || { cat "$WORK/audit.out" "$WORK/audit.log" >&2; fail "ktally audit failed"; }
kt_log_match "$older" "$WORK/audit.log" || fail "audit did not report the older schema"
kt_shape "$v1" | diff -q - "$WORK/v1_shape" > /dev/null || fail "status or audit altered a version-1 database"
[[ $(kt_schema_version "$v1") == none ]] || fail "status or audit recorded a schema version"

# init-db --dry-run: every pending migration and the tables it touches,
# with their sizes, and nothing changed (red before: no such option).
kt_sql "$v1" "ANALYZE TABLE ktally_batches, kafka_offset" > /dev/null
"$KTALLY" init-db --dry-run --db "$v1_uri" > "$WORK/dry.out" 2> "$WORK/dry.log" \
  || { cat "$WORK/dry.out" "$WORK/dry.log" >&2; fail "init-db --dry-run failed"; }
kt_shape "$v1" | diff -q - "$WORK/v1_shape" > /dev/null || fail "init-db --dry-run altered a version-1 database"
[[ $(kt_schema_version "$v1") == none ]] || fail "init-db --dry-run recorded a schema version"
grep -q "is at schema version 1; this ktally migrates it to $KT_SCHEMA_LATEST, $((KT_SCHEMA_LATEST - 1)) migrations" "$WORK/dry.out" \
  || { cat "$WORK/dry.out" >&2; fail "the dry run does not say what it migrates from and to"; }
for ((v = 2; v <= KT_SCHEMA_LATEST; v++)); do
  awk -v v="$v" '$1 == v' "$WORK/dry.out" | grep -q . || { cat "$WORK/dry.out" >&2; fail "the dry run lists no table for version $v"; }
done
dry_row() { awk -v v="$1" -v t="$2" '$1 == v && $3 == t' "$WORK/dry.out"; }  # dry_row VERSION TABLE
batches=$(kt_sql "$v1" "SELECT COUNT(*) FROM ktally_batches")
dry_row 2 ktally_batches | grep -Eq "alter, update +$batches " \
  || { cat "$WORK/dry.out" >&2; fail "version 2 should alter and update ktally_batches, $batches rows"; }
# The replay table: widened by what the SQL cannot say (its log_count INT).
dry_row 2 error_log_replay | grep -q "alter" || { cat "$WORK/dry.out" >&2; fail "the dry run misses the replay table version 2 widens"; }
dry_row 3 ktally_job | grep -q "create, insert .* - *new$" || { cat "$WORK/dry.out" >&2; fail "version 3 creates ktally_job"; }

# The migrating run: one migration logged, counts exact, still counting.
kt_gen "$topic" --lines 4000 --seed 141 --truth "$WORK/t2" > /dev/null
kt_sum_truths "$WORK/t1" "$WORK/t2" > "$WORK/truth"
run "$v1_uri" "$WORK/v1.log" --topic "$topic" --max-per-partition 500
[[ $(migrations "$WORK/v1.log") == 1 ]] || { cat "$WORK/v1.log" >&2; fail "transactional: expected one migration logged"; }
[[ $(kt_schema_version "$v1") == "$KT_SCHEMA_LATEST" ]] || fail "transactional: the version is not $KT_SCHEMA_LATEST"
kt_check_counts "$v1" "$WORK/truth"
kt_check_counts "$v1" <(kt_sql "$scratch" "SELECT log_time, log_count FROM error_log_replay ORDER BY log_time") error_log_replay
"$KTALLY" "${replay[@]}" --db "$v1_uri" 2>> "$WORK/v1.log" || fail "replay after the migration failed"
"$KTALLY" init-db --dry-run --db "$v1_uri" 2> /dev/null | grep -q "at schema version $KT_SCHEMA_LATEST, this ktally's: nothing to migrate" \
  || fail "init-db --dry-run after the migration should find nothing to do"
kt_check_counts "$v1" <(kt_sql "$scratch" "SELECT log_time, log_count FROM error_log_replay ORDER BY log_time") error_log_replay
kt_audit "$v1_uri"
[[ $(kt_offset_sum "$v1" "$topic") == 10000 ]] || fail "transactional: offsets do not reach 10000"

fresh_uri=$(kt_new_db migrate_fresh); fresh=$(kt_db_name "$fresh_uri")
"$KTALLY" init-db --db "$fresh_uri" 2> "$WORK/fresh.log" || fail "init-db failed"
"$KTALLY" "${replay[@]}" --db "$fresh_uri" 2>> "$WORK/fresh.log" || fail "fresh replay failed"
kt_check_same_shape "$v1" "$fresh" "transactional"
# A second start finds nothing to migrate.
run "$v1_uri" "$WORK/v1_again.log" --topic "$topic"
[[ $(migrations "$WORK/v1_again.log") == 0 ]] || fail "a migrated database was migrated again"

# --- idempotent ------------------------------------------------------------
scratch_uri=$(kt_new_db migrate_iscratch); scratch=$(kt_db_name "$scratch_uri")
itopic=$(kt_new_topic migrate_idem 3)
kt_gen "$itopic" --lines 6000 --seed 142 --truth "$WORK/i1" > /dev/null
run "$scratch_uri" "$WORK/iscratch.log" --mode idempotent --topic "$itopic" --max-per-partition 500
# Version 1 kept idempotent counts per chunk of 10,000 offsets: with 2,000
# records a partition, one chunk each, [0, stored offset), where this
# ktally's covered set is "0-offset".
[[ $(kt_sql "$scratch" "SELECT COUNT(*) FROM ktally_coverage c JOIN kafka_offset o USING (job, topic, \`partition\`)
                        WHERE covered = CONCAT('0-', o.\`offset\`) AND o.\`offset\` <= 10000") == 3 ]] \
  || fail "idempotent: the scratch run should cover [0, offset) of each partition, one chunk's worth"
v1_uri=$(kt_v1_db migrate_iv1 idempotent); v1=$(kt_db_name "$v1_uri")
# (This ktally keeps a topic's counts per minute, not per partition: all
# of them go to partition 0's chunk, which adds up the same.)
kt_sql "$v1" "INSERT INTO error_log_chunk SELECT job, topic, 0, 0, log_time, log_count
                FROM \`$scratch\`.error_log_topic;
              INSERT INTO ktally_chunk SELECT job, topic, \`partition\`, 0, \`offset\` FROM \`$scratch\`.kafka_offset"
kt_copy_rows "$scratch" "$v1" kafka_offset ktally_batches
kt_check_counts "$v1" "$WORK/i1"
kt_gen "$itopic" --lines 4000 --seed 143 --truth "$WORK/i2" > /dev/null
kt_sum_truths "$WORK/i1" "$WORK/i2" > "$WORK/itruth"
run "$v1_uri" "$WORK/iv1.log" --mode idempotent --topic "$itopic" --max-per-partition 500
[[ $(migrations "$WORK/iv1.log") == 1 ]] || fail "idempotent: expected one migration logged"
kt_check_counts "$v1" "$WORK/itruth"
kt_audit "$v1_uri"
# The chunks became covered sets, which the run extended to the new offsets.
[[ $(kt_sql "$v1" "SELECT COUNT(*) FROM ktally_coverage c JOIN kafka_offset o USING (job, topic, \`partition\`)
                   WHERE covered = CONCAT('0-', o.\`offset\`)") == 3 ]] || fail "idempotent: covered sets do not reach the offsets"
fresh_uri=$(kt_new_db migrate_ifresh); fresh=$(kt_db_name "$fresh_uri")
"$KTALLY" init-db --mode idempotent --db "$fresh_uri" 2> "$WORK/ifresh.log" || fail "init-db --mode idempotent failed"
kt_check_same_shape "$v1" "$fresh" "idempotent"

# --- ledger (credits only, unkeyed: two generations add up) ----------------
KT_LEDGER_GEN=$KT_BUILD/tests/support/kt-ledger-gen
ltopic=$(kt_new_topic migrate_ledger 2)
ledger_gen() {  # ledger_gen SEED: 600 credits over 20 accounts, oracle in $WORK/l_SEED
  "$KT_LEDGER_GEN" --brokers "$KT_BROKERS" --topic "$ltopic" --messages 600 --accounts 20 \
    --unkeyed --bad 0 --seed "$1" --expect "$WORK/l_$1" > /dev/null || fail "kt-ledger-gen failed"
}
ledger_gen 1401
scratch_uri=$(kt_new_db migrate_lscratch); scratch=$(kt_db_name "$scratch_uri")
run "$scratch_uri" "$WORK/lscratch.log" --kind ledger --topic "$ltopic" --max-per-partition 100
v1_uri=$(kt_v1_db migrate_lv1 schema ledger); v1=$(kt_db_name "$v1_uri")
kt_copy_rows "$scratch" "$v1" kafka_offset ktally_batches account_balance ledger_applied ledger_rejected
ledger_gen 1402
run "$v1_uri" "$WORK/lv1.log" --kind ledger --topic "$ltopic" --max-per-partition 100
[[ $(migrations "$WORK/lv1.log") == 1 ]] || fail "ledger: expected one migration logged"
# Balances in 1/10000 units: both generations' credits added.
cat "$WORK/l_1401/balances.tsv" "$WORK/l_1402/balances.tsv" | tr -d . \
  | awk -F'\t' '{ n[$1] += $2 } END { for (a in n) printf "%s\t%.0f\n", a, n[a] }' | LC_ALL=C sort > "$WORK/want"
kt_sql "$v1" "SELECT account, balance FROM account_balance" | tr -d . | LC_ALL=C sort > "$WORK/got"
diff "$WORK/got" "$WORK/want" >&2 || fail "ledger: balances differ from the two oracles"
[[ $(kt_sql "$v1" "SELECT COUNT(*) FROM ledger_applied") == $(cat "$WORK/l_1401/applied.tsv" "$WORK/l_1402/applied.tsv" | wc -l) ]] \
  || fail "ledger: applied txns differ from the two oracles"
kt_audit "$v1_uri"
fresh_uri=$(kt_new_db migrate_lfresh); fresh=$(kt_db_name "$fresh_uri")
run "$fresh_uri" "$WORK/lfresh.log" --kind ledger --topic "$ltopic"
# Version 1 created error_log in every database, a ledger's too; a ledger
# now creates only its own tables, and a migration drops none.
kt_check_same_shape "$v1" "$fresh" "ledger" error_log
# The database's identity: made by the migration (version 9) as by a fresh
# start, one row, a UUID; the two databases have their own.
id_v1=$(kt_sql "$v1" "SELECT id FROM ktally_database"); id_fresh=$(kt_sql "$fresh" "SELECT id FROM ktally_database")
[[ $id_v1 =~ ^[0-9a-f-]{36}$ && $id_fresh =~ ^[0-9a-f-]{36}$ && $id_v1 != "$id_fresh" ]] \
  || fail "identities after the migration ('$id_v1') and a fresh start ('$id_fresh')"

note "$TEST_NAME: version 1 migrated at start in three kinds of database, exact and counting on, shaped as fresh ones"
