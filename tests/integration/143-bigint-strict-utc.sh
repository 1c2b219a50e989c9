#!/usr/bin/env bash
# What ktally writes itself is never clamped, and its own times are UTC
# (issue #11 item 12 and committed_at), whatever the server's defaults. The
# server runs here with a non-strict sql_mode and a time zone with DST
# (Europe/Berlin), set globally for the test and restored after:
# - a minute past 2^31 ERROR lines: log_count is BIGINT (it was INT: an
#   error, or with this sql_mode silently 2147483647);
# - a user's table that cannot hold a count (TINYINT) is refused before
#   anything is read, never written 127 (and every session of ktally sets a
#   strict sql_mode besides);
# - committed_at is UTC, and --audit-keep compares it with UTC: rows 30
#   minutes old stay with --audit-keep 1h (in local time they were folded);
# - `init-db` on a version-1 database (ktally's tables and ledger) turns
#   the times version 1 stamped in the server's zone into UTC, summer and
#   winter rows each by their own offset.
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

saved=$(kt_sql mysql "SELECT CONCAT(@@global.sql_mode, '|', @@global.time_zone)")
restore_globals() {
  kt_sql mysql "SET GLOBAL sql_mode = '${saved%%|*}', GLOBAL time_zone = '${saved#*|}'" || true
}
trap 'restore_globals; kt_cleanup' EXIT
trap 'exit 1' TERM INT  # a timeout too restores the server's globals
if [[ $(kt_sql mysql "SELECT COUNT(*) FROM mysql.time_zone_name WHERE Name = 'Europe/Berlin'") == 0 ]]; then
  mariadb-tzinfo-to-sql /usr/share/zoneinfo/Europe/Berlin Europe/Berlin 2> /dev/null \
    | kt_sql mysql "$(cat)" || fail "cannot load the time zone Europe/Berlin (tzdata)"
fi
kt_sql mysql "SET GLOBAL sql_mode = '', GLOBAL time_zone = 'Europe/Berlin'"

run() {  # run DB_URI LOG ARGS...: ktally run to idle
  local uri=$1 log=$2; shift 2
  "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$uri" \
    --interval 0 --exit-when-idle "$@" 2>> "$log" || { tail -5 "$log" >&2; fail "a run failed"; }
}

db_uri=$(kt_new_db bigint); db=$(kt_db_name "$db_uri")
topic=$(kt_new_topic bigint 2)

# committed_at is UTC (the server's local time is an hour or two ahead).
kt_gen "$topic" --lines 2000 --seed 143 --truth "$WORK/t1" > /dev/null
run "$db_uri" "$WORK/run1.log" --max-per-partition 200
off=$(kt_sql "$db" "SELECT MAX(ABS(TIMESTAMPDIFF(SECOND, committed_at, UTC_TIMESTAMP()))) FROM ktally_batches")
((off < 300)) || fail "committed_at is ${off} s away from UTC"

# A minute past 2^31: history of 2^31 - 1 ERROR lines in every minute, then more.
big=2147483647
kt_sql "$db" "UPDATE error_log SET log_count = log_count + $big"
kt_gen "$topic" --lines 2000 --seed 144 --truth "$WORK/t2" > /dev/null
run "$db_uri" "$WORK/run2.log"
awk -F'\t' -v big="$big" 'FNR == NR { n[$1] += $2 + big; next } { n[$1] += $2 }
  END { for (m in n) printf "%s\t%.0f\n", m, n[m] }' "$WORK/t1" "$WORK/t2" | sort > "$WORK/truth"
kt_check_counts "$db" "$WORK/truth"

# --audit-keep 1h: partition 0's rows are two hours old (folded), partition
# 1's thirty minutes (kept): both read as UTC.
kt_sql "$db" "UPDATE ktally_batches SET committed_at = UTC_TIMESTAMP(3) - INTERVAL
              IF(\`partition\` = 0, 120, 30) MINUTE"
kept=$(kt_sql "$db" "SELECT COUNT(*) FROM ktally_batches WHERE \`partition\` = 1")
((kept > 1)) || fail "partition 1 should have several audit rows, has $kept"
run "$db_uri" "$WORK/run3.log" --audit-keep 1h
[[ $(kt_sql "$db" "SELECT COUNT(*) FROM ktally_batches WHERE \`partition\` = 0") == 1 ]] \
  || fail "--audit-keep 1h did not fold partition 0's two-hour-old rows"
[[ $(kt_sql "$db" "SELECT COUNT(*) FROM ktally_batches WHERE \`partition\` = 1") == "$kept" ]] \
  || fail "--audit-keep 1h folded rows 30 minutes old (committed_at compared in local time)"
# The history was not counted by a batch: without it, the audit agrees.
kt_sql "$db" "UPDATE error_log SET log_count = log_count - $big WHERE log_count >= $big"
kt_audit "$db_uri"

# A user's TINYINT table cannot hold the counts: refused; nothing is clamped.
dense=$(kt_new_topic dense 1)
kt_gen "$dense" --lines 3000 --per-second 50 --seed 145 --truth "$WORK/t_dense" > /dev/null
awk -F'\t' '$2 > 127 { found = 1 } END { exit !found }' "$WORK/t_dense" || fail "no minute above 127 ERROR lines"
kt_sql "$db" "CREATE TABLE tiny (log_time DATETIME PRIMARY KEY, log_count TINYINT NOT NULL DEFAULT 0)"
rc=0
"$KTALLY" replay --brokers "$KT_BROKERS" --topic "$dense" --db "$db_uri" --table tiny \
  --from 0:0 --until 0:3000 2> "$WORK/replay.log" || rc=$?
# Refused before anything is read: the table is not the shape ktally
# writes (a TINYINT would have clamped, or failed a batch after reading it).
((rc == 2)) || { tail -3 "$WORK/replay.log" >&2; fail "replay into a TINYINT table: exit $rc, not 2"; }
grep -q "table tiny is not the shape ktally writes: column log_count is tinyint, not bigint" "$WORK/replay.log" \
  || { tail -3 "$WORK/replay.log" >&2; fail "replay did not name the column that cannot hold the counts"; }
[[ $(kt_sql "$db" "SELECT COUNT(*) FROM tiny") == 0 ]] || fail "tiny holds clamped counts"

# init-db converts version 1's local times to UTC: CEST (+2) in July, CET (+1) in December.
v1_uri=$(kt_new_db bigint_v1); v1=$(kt_db_name "$v1_uri")
kt_sql "$v1" "$(cat "$KT_SRC/tests/integration/schema-v1/schema.sql" "$KT_SRC/tests/integration/schema-v1/ledger.sql")"
kt_sql "$v1" "INSERT INTO ktally_batches (job, topic, \`partition\`, from_offset, until_offset,
                record_count, line_count, error_lines, malformed_lines, target, member, committed_at)
              VALUES ('j', 't', 0, 0, 1, 1, 1, 0, 0, 'account_balance', 'm', '2024-07-01 12:00:00.250'),
                     ('j', 't', 0, 1, 2, 1, 1, 0, 0, 'account_balance', 'm', '2024-12-01 12:00:00.500');
              INSERT INTO account_balance VALUES ('A', 1, '2024-07-01 12:00:00');
              INSERT INTO ledger_applied VALUES ('T1', 'A', 1, 1, '2024-07-01 11:00:00', 't', 0, 0, '2024-12-01 12:00:00');
              INSERT INTO ledger_rejected VALUES ('T2', 'A', -5, 'overdraft', '2024-07-01 11:00:00', 't', 0, 1, '2024-07-01 12:00:00')"
"$KTALLY" init-db --db "$v1_uri" 2> "$WORK/init.log" || { cat "$WORK/init.log" >&2; fail "init-db on version 1 failed"; }
kt_sql "$v1" "SELECT committed_at FROM ktally_batches ORDER BY id;
              SELECT updated_at FROM account_balance; SELECT applied_at FROM ledger_applied;
              SELECT rejected_at FROM ledger_rejected" > "$WORK/times"
printf '%s\n' '2024-07-01 10:00:00.250' '2024-12-01 11:00:00.500' '2024-07-01 10:00:00.000' \
  '2024-12-01 11:00:00.000' '2024-07-01 10:00:00.000' > "$WORK/want_times"
diff "$WORK/times" "$WORK/want_times" >&2 || fail "version 1's times were not turned into UTC"

note "$TEST_NAME: counts past 2^31 exact, no clamping, committed_at and --audit-keep in UTC, version 1's times converted"
