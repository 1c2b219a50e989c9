#!/usr/bin/env bash
# Issue 11 item 9, the poison pill: no record content makes a batch fail
# for ever. An iso8601 job reads good lines around lines whose bucket falls
# outside what DATETIME holds ("9999-12-31T23:59:59-01:00" is year 10000,
# which MariaDB refused: exit 3 on every restart): the good lines are
# counted exactly, with 1m buckets in both modes and with 1h buckets, the
# others are malformed, counted and sampled, and every run, a restart too,
# exits 0. A ledger job reads good transactions around hostile ts, account
# and amount fields (second 60, years 999 and 10000, a lone surrogate, 65
# characters, amounts past the int64 bound, a balance that would pass it):
# balances, applied and rejected rows are exact, the rest bad messages
# counted by reason, and every run exits 0. The count jobs keep the poison
# lines (--dead-letters), each once, with the reason "range".
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

malformed_in() { kt_log_sum batch malformed "$1"; }

# ---- counts: iso8601 ------------------------------------------------------
cat > "$WORK/lines" <<'EOF'
2017-07-30T14:09:08Z ERROR a
2017-07-30T16:09:30+02:00 ERROR b
9999-12-31T23:59:59-01:00 ERROR poison: year 10000
2017-07-30T14:10:00Z INFO x
1000-01-01T00:00:00+00:01 ERROR poison: year 999
9999-12-31T23:59:59Z ERROR the last minute DATETIME holds
1000-01-01T00:00:00Z ERROR the first
2016-12-31T23:59:60Z ERROR a leap second counts in its minute
9999-12-31T23:30:00-00:30 INFO poison whatever the level
0999-12-31T23:30:00-01:00 ERROR year 999 locally, 1000 in UTC
9999-12-31T23:59:59-00:59 ERROR poison: 10000-01-01 00:58
2017-07-30T14:11:00Z ERROR c
EOF
printf '1000-01-01 00:00:00\t1\n1000-01-01 00:30:00\t1\n2016-12-31 23:59:00\t1\n2017-07-30 14:09:00\t2\n2017-07-30 14:11:00\t1\n9999-12-31 23:59:00\t1\n' > "$WORK/expected_1m"
printf '1000-01-01 00:00:00\t2\n2016-12-31 23:00:00\t1\n2017-07-30 14:00:00\t3\n9999-12-31 23:00:00\t1\n' > "$WORK/expected_1h"
topic=$(kt_new_topic poison 2)
kcat -b "$KT_BROKERS" -P -t "$topic" -l -X sticky.partitioning.linger.ms=0 "$WORK/lines" || fail "kcat -P"
records=$(wc -l < "$WORK/lines")

for job in transactional:1m idempotent:1m transactional:1h; do
  mode=${job%%:*} bucket=${job#*:}
  db_uri=$(kt_new_db "poison_${mode}_$bucket"); db=$(kt_db_name "$db_uri")
  for run in first restart; do
    log=$WORK/${mode}_${bucket}_$run.log rc=0
    "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --mode "$mode" \
      --time-format iso8601 --bucket "$bucket" --interval 0 --exit-when-idle --log-format json \
      --dead-letters poisoned 2> "$log" || rc=$?
    ((rc == 0)) || { tail -5 "$log" >&2; fail "$mode, $bucket: $run run exited $rc"; }
    kt_check_counts "$db" "$WORK/expected_$bucket"
  done
  [[ $(kt_offset_sum "$db" "$topic") == "$records" ]] || fail "$mode, $bucket: offsets short of $records"
  malformed=$(malformed_in "$WORK/${mode}_${bucket}_first.log")
  [[ $malformed == 4 ]] || fail "$mode, $bucket: $malformed malformed lines reported, expected 4"
  kt_log_has sample "$WORK/${mode}_${bucket}_first.log" || fail "$mode, $bucket: no sample"
  [[ $(malformed_in "$WORK/${mode}_${bucket}_restart.log") == 0 ]] || fail "$mode, $bucket: the restart read again"
  # --dead-letters kept the four, each once, as the range's.
  kt_sql "$db" "SELECT CONCAT(line_no, ' ', reason, ' ', raw) FROM poisoned" | sort > "$WORK/kept"
  grep poison "$WORK/lines" | sed 's/^/1 range /' | sort | cmp -s - "$WORK/kept" \
    || { cat "$WORK/kept" >&2; fail "$mode, $bucket: the dead-letter table does not hold the 4 poison lines"; }
done
kt_audit "$db_uri"
note "$TEST_NAME: iso8601: 8 good ERROR lines exact (1m both modes, 1h), 4 out of DATETIME's range malformed, every run and restart exit 0"

# ---- ledger ----------------------------------------------------------------
pair='\ud83d\ude00'  # U+1F600: 4 bytes of UTF-8, one character
acc64=$(for ((i = 0; i < 64; i++)); do printf '%s' "$pair"; done)
ts='2017-07-30 14:09:08'
{
  cat <<EOF
{"txn": "T1", "account": "ACC-1", "amount": "100.50", "ts": "$ts"}
{"txn": "B1", "account": "ACC-1", "amount": "1", "ts": "2016-12-31 23:59:60"}
{"txn": "T2", "account": "ACC-1", "amount": "-20.25", "ts": "9999-12-31 23:59:59"}
{"txn": "B2", "account": "ACC-1", "amount": "1", "ts": "10000-01-01 00:00:00"}
{"txn": "B3", "account": "ACC-1", "amount": "1", "ts": "0999-12-31 23:59:59"}
{"txn": "T3", "account": "ACC-2", "amount": "922337203685477.5807", "ts": "1000-01-01 00:00:00"}
{"txn": "B4", "account": "\\ud800x", "amount": "1", "ts": "$ts"}
{"txn": "T4", "account": "ACC-2", "amount": "0.0001", "ts": "$ts"}
{"txn": "B5", "account": "\\udc00", "amount": "1", "ts": "$ts"}
{"txn": "T5", "account": "$acc64", "amount": "1", "ts": "$ts"}
{"txn": "B6", "account": "$acc64$pair", "amount": "1", "ts": "$ts"}
{"txn": "B7", "account": "ACC-1", "amount": "922337203685477.5808", "ts": "$ts"}
{"txn": "T6", "account": "ACC-1", "amount": "-1000", "ts": "$ts"}
{"txn": "B8", "account": "ACC-1", "amount": "9999999999999999.9999", "ts": "$ts"}
{"txn": "B9", "account": "A\\u0000B", "amount": "1", "ts": "$ts"}
{"txn": "T7", "account": "ACC-3", "amount": "5", "ts": "$ts"}
EOF
} > "$WORK/ledger"
topic=$(kt_new_topic poison_ledger 1)
kcat -b "$KT_BROKERS" -P -t "$topic" -l "$WORK/ledger" || fail "kcat -P"
db_uri=$(kt_new_db poison_ledger); db=$(kt_db_name "$db_uri")
for run in first restart; do
  rc=0
  "$KTALLY" run --kind ledger --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" \
    --interval 0 --exit-when-idle --log-format json 2> "$WORK/ledger_$run.log" || rc=$?
  ((rc == 0)) || { tail -5 "$WORK/ledger_$run.log" >&2; fail "ledger: $run run exited $rc"; }
done
emoji=$(for ((i = 0; i < 64; i++)); do printf 'F09F9880'; done)
kt_sql "$db" "SELECT IF(account LIKE 'ACC-%', account, HEX(account)), balance FROM account_balance ORDER BY 1" > "$WORK/got"
printf 'ACC-1\t80.2500\nACC-2\t922337203685477.5807\nACC-3\t5.0000\n%s\t1.0000\n' "$emoji" | LC_ALL=C sort > "$WORK/want"
LC_ALL=C sort "$WORK/got" | diff - "$WORK/want" >&2 || fail "ledger: balances differ"
[[ $(kt_sql "$db" "SELECT GROUP_CONCAT(txn ORDER BY txn) FROM ledger_applied") == T1,T2,T3,T5,T7 ]] \
  || fail "ledger: applied $(kt_sql "$db" "SELECT GROUP_CONCAT(txn ORDER BY txn) FROM ledger_applied")"
[[ $(kt_sql "$db" "SELECT GROUP_CONCAT(txn, ':', reason ORDER BY txn) FROM ledger_rejected") == "T4:overflow,T6:insufficient funds" ]] \
  || fail "ledger: rejected $(kt_sql "$db" "SELECT GROUP_CONCAT(txn, ':', reason ORDER BY txn) FROM ledger_rejected")"
[[ $(kt_sql "$db" "SELECT CHAR_LENGTH(account), LENGTH(account) FROM ledger_applied WHERE txn = 'T5'") == $'64\t256' ]] \
  || fail "ledger: the 64-character account was not stored whole"
bad=$(kt_log_sum batch malformed "$WORK/ledger_first.log")
[[ $bad == 9 ]] || fail "ledger: $bad bad messages reported, expected 9"
for reason in bad_timestamp lone_surrogate_escape field_too_long overflow u0000_in_a_string; do
  (($(kt_log_sum bad-messages "$reason" "$WORK/ledger_first.log") > 0)) \
    || fail "ledger: no bad message counted as '$reason'"
done
kt_log_has sample "$WORK/ledger_first.log" || fail "ledger: no bad message sampled"
[[ $(kt_offset_sum "$db" "$topic") == 16 ]] || fail "ledger: offsets short of 16"
kt_audit "$db_uri"
note "$TEST_NAME: ledger: 5 applied, 2 rejected, 9 bad (ts :60, years 999 and 10000, lone surrogates, 65 characters, amounts past int64, \\u0000) counted by reason, every run exit 0"
