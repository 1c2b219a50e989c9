#!/usr/bin/env bash
# A migration cut short by kill -9 is completed at the next start, and
# none of its steps does harm when it runs again; two instances starting at
# once migrate once. One version-1 database holds every kind of ktally
# table (counts, idempotent chunks, ledger, a replay table), with rows, and
# the server runs at '+03:00', so that converting version 1's times to UTC
# twice would show.
# - kill after step K, for every K: the test hook
#   KTALLY_TEST_MIGRATION_KILL_AFTER=K makes `ktally init-db` SIGKILL
#   itself right after its K-th step (a DDL statement, or the transaction
#   that rewrites the times and records the version); the next process
#   runs every step again, and dies one step further;
# - kill -9 from outside at a random moment of a slow migration (5,000
#   rows in every table: each ALTER copies its table), then a start;
# - two `ktally init-db` at once on such a database: both succeed, one
#   migration is logged (the other waits on the named lock).
# Each time: version 2, every row kept, times shifted by exactly 3 hours,
# idempotent mode's chunks turned into per-partition counts and covered
# sets (touching chunks merged, an overlapping one kept, as an awk oracle
# says), and the shape of a fresh database.
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"
source "$KT_SRC/tests/integration/schema-v1/lib.sh"

saved=$(kt_sql mysql "SELECT @@global.time_zone")
restore_zone() { kt_sql mysql "SET GLOBAL time_zone = '$saved'" || true; }
trap 'restore_zone; kt_cleanup' EXIT
trap 'exit 1' TERM INT  # a timeout too restores the server's global
kt_sql mysql "SET GLOBAL time_zone = '+03:00'"

fresh_uri=$(kt_new_db restart_fresh); fresh=$(kt_db_name "$fresh_uri")
kt_sql "$fresh" "$(cat "$KT_SRC/sql/common.sql" "$KT_SRC/sql/counts.sql" "$KT_SRC/sql/idempotent.sql" "$KT_SRC/sql/ledger.sql")
                 CREATE TABLE error_log_replay LIKE error_log"
"$KTALLY" init-db --db "$fresh_uri" 2> /dev/null || fail "init-db of the fresh database failed"

# A version-1 database with N rows of each table (one DDL file after the
# other, as version 1 created them; idempotent.sql's view stands aside for
# the counts table of the same name).
v1_filled() {  # v1_filled NAME N: prints its URI
  local uri db
  uri=$(kt_v1_db "$1" schema idempotent ledger); db=$(kt_db_name "$uri")
  kt_v1_replay_table "$db" error_log_replay
  kt_sql "$db" "
    INSERT INTO error_log SELECT '2017-07-30 00:00:00' + INTERVAL seq MINUTE, seq FROM seq_1_to_$2;
    INSERT INTO error_log_replay SELECT log_time, log_count * 2 FROM error_log;
    INSERT INTO kafka_offset SELECT 'job', 'topic', seq, seq * 10 FROM seq_1_to_$2;
    INSERT INTO ktally_batches (job, topic, \`partition\`, from_offset, until_offset, record_count,
        line_count, error_lines, malformed_lines, target, member, committed_at)
      SELECT 'job', 'topic', seq, 0, seq * 10, seq, seq, seq, 0, IF(seq % 2, 'error_log', 'error_log_replay'),
             CONCAT('job-', seq, '@host'), '2024-07-01 12:00:00.125' + INTERVAL seq SECOND FROM seq_1_to_$2;
    INSERT INTO error_log_chunk SELECT 'job', 'topic', seq, 0, '2017-07-30 00:00:00', seq FROM seq_1_to_$2;
    INSERT INTO ktally_chunk SELECT 'job', 'topic', seq, 0, seq FROM seq_1_to_$2;
    -- Partition 0: touching chunks, one off the grid overlapping them
    -- (a rewind), one never written (-1); minutes spread over chunks.
    INSERT INTO error_log_chunk VALUES ('job', 'topic', 0, 0, '2017-07-30 00:01:00', 5),
      ('job', 'topic', 0, 10000, '2017-07-30 00:01:00', 7), ('job', 'topic', 0, 12345, '2017-07-30 00:02:00', 3),
      ('other', 'topic', 0, 0, '2017-07-30 00:01:00', 1);
    INSERT INTO ktally_chunk VALUES ('job', 'topic', 0, 0, 10000), ('job', 'topic', 0, 10000, 20000),
      ('job', 'topic', 0, 12345, 20000), ('job', 'topic', 0, 20000, 23456), ('job', 'topic', 0, 30000, -1),
      ('other', 'topic', 0, 0, 700);
    INSERT INTO account_balance SELECT CONCAT('ACC-', seq), seq, '2024-12-01 12:00:00' FROM seq_1_to_$2;
    INSERT INTO ledger_applied SELECT CONCAT('T-', seq), CONCAT('ACC-', seq), seq, seq,
        '2017-07-30 14:00:00', 'topic', 0, seq, '2024-07-01 12:00:00' + INTERVAL seq SECOND FROM seq_1_to_$2;
    INSERT INTO ledger_rejected SELECT CONCAT('R-', seq), CONCAT('ACC-', seq), -seq, 'overdraft',
        '2017-07-30 14:00:00', 'topic', 1, seq, '2024-12-01 12:00:00' FROM seq_1_to_$2"
  echo "$uri"
}

# Every row, times as UTC: what a migration must leave (given local times).
rows() {  # rows DB SHIFT: the rows, ktally's own times shifted by SHIFT hours
  kt_sql "$1" "
    SELECT * FROM error_log ORDER BY log_time; SELECT * FROM error_log_replay ORDER BY log_time;
    SELECT job, topic, \`partition\`, \`offset\` FROM kafka_offset ORDER BY \`partition\`;
    SELECT id, job, topic, \`partition\`, from_offset, until_offset, record_count, line_count,
           error_lines, malformed_lines, target, member, committed_at + INTERVAL $2 HOUR
      FROM ktally_batches ORDER BY id;
    SELECT account, balance, updated_at + INTERVAL $2 HOUR FROM account_balance ORDER BY account;
    SELECT txn, account, amount, balance, ts, topic, \`partition\`, \`offset\`, applied_at + INTERVAL $2 HOUR
      FROM ledger_applied ORDER BY txn;
    SELECT txn, account, amount, reason, ts, topic, \`partition\`, \`offset\`, rejected_at + INTERVAL $2 HOUR
      FROM ledger_rejected ORDER BY txn"
}

# Idempotent mode's rows as version 2 holds them (summed per topic and
# minute, as version 4 keeps them), from version 1's chunks by an oracle of
# its own: counts summed per topic and minute, touching
# chunks [start, until) merged into one interval, others kept apart.
chunks_as_v2() {  # chunks_as_v2 DB
  kt_sql "$1" "SELECT job, topic, log_time, log_count FROM error_log_chunk" \
    | awk -F'\t' '{ n[$1 "\t" $2 "\t" $3] += $4 } END { for (k in n) print k "\t" n[k] }' \
    | LC_ALL=C sort
  kt_sql "$1" "SELECT job, topic, \`partition\`, chunk_start, chunk_until FROM ktally_chunk
               WHERE chunk_until > chunk_start ORDER BY job, topic, \`partition\`, chunk_start" \
    | awk -F'\t' '{ k = $1 "\t" $2 "\t" $3 }
        k != key { if (key != "") print key "\t" set "-" until; key = k; set = $4; until = $5; next }
        $4 == until { until = $5; next }
        { set = set "-" until "," $4; until = $5 }
        END { if (key != "") print key "\t" set "-" until }' | LC_ALL=C sort
}
v2_idempotent() {  # v2_idempotent DB
  # Per partition until version 4 folds them per topic (the folded copy is
  # complete once the per-partition table is gone).
  if [[ -n $(kt_sql "$1" "SHOW TABLES LIKE 'error_log_partition'") ]]; then
    kt_sql "$1" "SELECT job, topic, log_time, SUM(log_count) FROM error_log_partition
                 GROUP BY job, topic, log_time"
  else
    kt_sql "$1" "SELECT job, topic, log_time, log_count FROM error_log_topic"
  fi | LC_ALL=C sort
  kt_sql "$1" "SELECT job, topic, \`partition\`, covered FROM ktally_coverage" | LC_ALL=C sort
}

check_migrated() {  # check_migrated DB WANT_ROWS WANT_IDEMPOTENT WHAT
  (($(kt_schema_version "$1") >= 2)) || fail "$4: the version is $(kt_schema_version "$1"), not 2 or later"
  rows "$1" 0 > "$WORK/rows_now"
  diff -q "$WORK/rows_now" "$2" > /dev/null \
    || { diff "$WORK/rows_now" "$2" | head -6 >&2; fail "$4: the rows are not version 1's with UTC times"; }
  v2_idempotent "$1" > "$WORK/idem_now"
  diff -q "$WORK/idem_now" "$3" > /dev/null \
    || { diff "$WORK/idem_now" "$3" | head -6 >&2; fail "$4: the chunks did not become version 2's rows"; }
  # Between two later migrations, the shape is an older version's.
  [[ $(kt_schema_version "$1") != "$KT_SCHEMA_LATEST" ]] || kt_check_same_shape "$1" "$fresh" "$4"
}

# --- kill after each step ---------------------------------------------------
uri=$(v1_filled restart_steps 20); db=$(kt_db_name "$uri")
rows "$db" -3 > "$WORK/want_steps"
rows "$db" 0 > "$WORK/v1_rows"
chunks_as_v2 "$db" > "$WORK/want_idem"
grep -q "^job	topic	0	0-20000,12345-23456$" "$WORK/want_idem" || fail "the oracle's partition 0 is wrong"
for ((k = 1; ; k++)); do
  ((k < 40)) || fail "the migration never finished"
  rc=0
  KTALLY_TEST_MIGRATION_KILL_AFTER=$k "$KTALLY" init-db --db "$uri" --log-format json \
    2>> "$WORK/steps.log" || rc=$?
  ((rc == 0)) && break
  ((rc == 137)) || { tail -3 "$WORK/steps.log" >&2; fail "step $k: exit $rc, not a SIGKILL"; }
  version=$(kt_schema_version "$db")
  if [[ $version != none ]] && ((version >= 2)); then
    # Killed right after the version transaction: the migration is whole.
    check_migrated "$db" "$WORK/want_steps" "$WORK/want_idem" "killed after step $k"
  else
    rows "$db" 0 | diff -q - "$WORK/v1_rows" > /dev/null || fail "killed after step $k: rows changed before the version"
    # Chunks are copied (set, not added) before they go: whichever form
    # the database holds now, its content is the same.
    if [[ -n $(kt_sql "$db" "SHOW TABLES LIKE 'error_log_chunk'") ]]; then
      chunks_as_v2 "$db" | diff -q - "$WORK/want_idem" > /dev/null || fail "killed after step $k: chunks changed"
    else
      v2_idempotent "$db" | diff -q - "$WORK/want_idem" > /dev/null || fail "killed after step $k: counts or covered sets lost"
    fi
  fi
done
steps=$((k - 1))
((steps >= 8)) || fail "only $steps steps: the hook did not count the migration's statements"
check_migrated "$db" "$WORK/want_steps" "$WORK/want_idem" "killed after each of $steps steps"
kt_log_match '.event == "migrate" and .from == 1 and .to == 2' "$WORK/steps.log" || fail "no migration logged"

# --- kill -9 from outside, at a random moment of a slow migration -------------
uri=$(v1_filled restart_kill 5000); db=$(kt_db_name "$uri")
rows "$db" -3 > "$WORK/want_kill"
chunks_as_v2 "$db" > "$WORK/want_kill_idem"
start=$(date +%s%N)
"$KTALLY" init-db --db "$uri" 2> /dev/null || fail "timing run failed"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
uri=$(v1_filled restart_kill2 5000); db=$(kt_db_name "$uri")
landed=0
kt_kill9 20 "$ms" "$WORK/kill.log" "$KTALLY" init-db --db "$uri" && landed=1
"$KTALLY" init-db --db "$uri" 2>> "$WORK/kill.log" || { tail -3 "$WORK/kill.log" >&2; fail "the start after kill -9 failed"; }
check_migrated "$db" "$WORK/want_kill" "$WORK/want_kill_idem" "kill -9 during the migration"

# --- two starts at once -------------------------------------------------------
uri=$(v1_filled restart_two 5000); db=$(kt_db_name "$uri")
"$KTALLY" init-db --db "$uri" --log-format json 2> "$WORK/two_a.log" & a=$!
"$KTALLY" init-db --db "$uri" --log-format json 2> "$WORK/two_b.log" & b=$!
KT_CHILDREN+=("$a" "$b")
wait "$a" || { cat "$WORK/two_a.log" >&2; fail "the first of two starts failed"; }
wait "$b" || { cat "$WORK/two_b.log" >&2; fail "the second of two starts failed"; }
[[ $(kt_log_count_if '.event == "migrate" and .from == 1' "$WORK/two_a.log" "$WORK/two_b.log") == 1 ]] \
  || fail "two starts at once migrated twice"
check_migrated "$db" "$WORK/want_kill" "$WORK/want_kill_idem" "two starts at once"

note "$TEST_NAME: $steps kills one step further each, kill -9 $( ((landed)) && echo landed || echo missed ) in a ${ms} ms migration, two starts at once: each completed once"
