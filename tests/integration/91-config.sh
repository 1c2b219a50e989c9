#!/usr/bin/env bash
# --config FILE: a run configured by a file is exact; a flag overrides the
# file; an unknown key or section is one error line naming the file line;
# a bad librdkafka property in [kafka] is librdkafka's error, and one that
# exactly-once depends on is refused, each naming the line; a password file
# others may read is refused; `config --check` prints the effective
# settings with every secret hidden, and reports every error of a file at
# once, one line each with its file line, exit 2: unknown keys and
# sections, bad values, and files it names that cannot be read (ssl-ca,
# password-file); [mysql] uri beside a key it would ignore (ssl-mode), and
# a --db flag that would drop the file's TLS, are refused in one line. Red
# before: the first error only, an ssl-ca that does not exist passed, and
# uri + ssl-mode = verify-identity connected unverified (exit 0).
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

db_uri=$(kt_new_db config); db=$(kt_db_name "$db_uri")
topic=$(kt_new_topic config 3)
kt_gen "$topic" --lines 20000 --seed 91 --truth "$WORK/truth" > /dev/null
printf '%s\n' "$KT_MYSQL_PASSWORD" > "$WORK/pw"; chmod 600 "$WORK/pw"
cat > "$WORK/ktally.conf" <<CONF
# a comment
[kafka]
brokers = $KT_BROKERS
topic = $topic
sasl.password = Sup3rSecret
socket.keepalive.enable = true

[mysql]
host = $KT_MYSQL_HOST
port = $KT_MYSQL_PORT
user = $KT_MYSQL_USER
database = $db
password-file = $WORK/pw

[batch]
interval = 0
max-per-partition = 999
exit-when-idle = true
CONF

# Overridden on the command line: interval and max-per-partition.
"$KTALLY" config --check --config "$WORK/ktally.conf" --max-per-partition 1234 > "$WORK/check" \
  || fail "config --check failed on a good file"
grep -q "^max-per-partition = 1234$" "$WORK/check" || fail "the flag did not override the file"
grep -q "^interval = 0$" "$WORK/check" || fail "interval not taken from the file"
if grep -q "Sup3rSecret\|$KT_MYSQL_PASSWORD" "$WORK/check"; then fail "config --check shows a secret"; fi
grep -q "^# sasl.password = (set, hidden)$" "$WORK/check" || fail "sasl.password not shown as hidden"
# What config --check prints reads back as a config file, [parse] and
# [http] included (before, http sat under [batch] and failed as unknown).
"$KTALLY" config --check --config "$WORK/ktally.conf" --max-per-partition 1234 --http 127.0.0.1:0 \
  --pattern '^(?<time>\S+ \S+) (?<level>[A-Z]+)' --levels ERROR,FATAL --bucket 5m > "$WORK/check2" \
  || fail "config --check failed"
grep -q "^\[parse\]$" "$WORK/check2" && grep -q "^levels = ERROR,FATAL$" "$WORK/check2" || fail "config --check does not print [parse]"
"$KTALLY" config --check --config "$WORK/check2" > "$WORK/check3" 2> "$WORK/err" \
  || { cat "$WORK/err" >&2; fail "the output of config --check does not read back"; }
diff <(grep -v '^#' "$WORK/check2") <(grep -v '^#' "$WORK/check3") > /dev/null \
  || fail "config --check of its own output differs: $(diff "$WORK/check2" "$WORK/check3")"

# The real run, from the file (sasl.password is harmless without SASL).
"$KTALLY" run --config "$WORK/ktally.conf" --log-format json 2> "$WORK/run.log" \
  || { cat "$WORK/run.log" >&2; fail "run --config failed"; }
kt_check_counts "$db" "$WORK/truth"
kt_log_match '.event == "batch" and .partitions == 3 and .records == 2997' "$WORK/run.log" \
  || { cat "$WORK/run.log" >&2; fail "max-per-partition 999 from the file not used"; }

# The commands that manage jobs read [mysql] (and [kafka]'s brokers) from
# a config file too, as run, replay and status do (red before the option
# table: audit, jobs, reset and forget ignored them and wanted --db).
{ printf '[kafka]\nbrokers = %s\n' "$KT_BROKERS"; sed -n '/^\[mysql\]$/,/^$/p' "$WORK/ktally.conf"; } \
  > "$WORK/manage.conf"
grep -q "^password-file = " "$WORK/manage.conf" || fail "manage.conf lacks the [mysql] section"
"$KTALLY" jobs --config "$WORK/manage.conf" > "$WORK/jobs.out" 2> "$WORK/err" && grep -q "^$topic " "$WORK/jobs.out" \
  || { cat "$WORK/jobs.out" "$WORK/err" >&2; fail "jobs --config did not read [mysql]"; }
"$KTALLY" audit --config "$WORK/manage.conf" > "$WORK/audit.out" 2> "$WORK/err" \
  || { cat "$WORK/audit.out" "$WORK/err" >&2; fail "audit --config did not read [mysql]"; }
"$KTALLY" reset --config "$WORK/manage.conf" --job "$topic" --to latest > "$WORK/reset.out" 2> "$WORK/err" \
  && grep -q "^job $topic: count, transactional" "$WORK/reset.out" \
  || { cat "$WORK/reset.out" "$WORK/err" >&2; fail "reset --config did not read [mysql]"; }
"$KTALLY" forget --config "$WORK/manage.conf" --job "$topic" > "$WORK/forget.out" 2> "$WORK/err" \
  && grep -q "^dry run: nothing changed" "$WORK/forget.out" \
  || { cat "$WORK/forget.out" "$WORK/err" >&2; fail "forget --config did not read [mysql]"; }
# config --help is config's own help, exit 0, and so is config --check
# --help (red before the option table: exit 2 naming itself, and run's).
for words in "--help" "--check --help"; do
  # shellcheck disable=SC2086  # the words, split
  "$KTALLY" config $words > "$WORK/help" 2>&1 || fail "ktally config $words: exit $?"
  grep -q "Checks the options of a \`run\`" "$WORK/help" && grep -q -- "--connect" "$WORK/help" \
    || { head -5 "$WORK/help" >&2; fail "ktally config $words is not config's help"; }
done

bad() {  # bad PATTERN FILE-CONTENT: config --check exits 2 with one line
  printf '%b' "$2" > "$WORK/bad.conf"
  local rc=0
  "$KTALLY" config --check --config "$WORK/bad.conf" --brokers b --topic t --db mysql://u@h/d \
    > /dev/null 2> "$WORK/err" || rc=$?
  [[ $rc == 2 && $(wc -l < "$WORK/err") == 1 ]] && grep -q -- "$1" "$WORK/err" \
    || { cat "$WORK/err" >&2; fail "config error '$1': exit $rc"; }
}
bad "bad.conf:3: unknown key 'intervall' in \[batch\]" "# x\n[batch]\nintervall = 3\n"
bad "bad.conf:2: unknown section \[bach\]" "\n[bach]\ninterval = 3\n"
bad "unknown key 'pasword-file' in \[mysql\]" "[mysql]\npasword-file = /x\n"
bad "bad.conf:2: \[kafka\] no.such.property: No such configuration property" "[kafka]\nno.such.property = 1\n"
bad "bad.conf:3: \[kafka\] enable.partition.eof: refused" "[kafka]\n\nenable.partition.eof = true\n"
bad "bad.conf:2: \[kafka\] group.id: refused: give --group" "[kafka]\ngroup.id = g\n"
bad "security.protocol: Invalid value \"...\"" "[kafka]\nsecurity.protocol = Sup3rSecret\n"
if grep -q Sup3rSecret "$WORK/err"; then fail "a bad [kafka] value is quoted back"; fi
printf '%s\n' "$KT_MYSQL_PASSWORD" > "$WORK/pw-open"; chmod 644 "$WORK/pw-open"
bad "--db-password-file: '$WORK/pw-open' is readable or writable by group or others (mode 0644)" \
  "[mysql]\npassword-file = $WORK/pw-open\n"
bad "--interval" "[batch]\ninterval = -3\n"
bad "exit-when-idle: expected true or false" "[batch]\nexit-when-idle = maybe\n"
# Every error at once, one line each, each with its line.
cat > "$WORK/many.conf" <<CONF
[kafka]
brokers = $KT_BROKERS
topic = $topic
[mysql]
host = $KT_MYSQL_HOST
user = $KT_MYSQL_USER
database = $db
ssl-mode = verify-ca
ssl-ca = $WORK/no-such-ca.pem
[batch]
intervall = 3
max-per-partition = 0
mode = sometimes
[bach]
x = 1
CONF
rc=0; "$KTALLY" config --check --config "$WORK/many.conf" > /dev/null 2> "$WORK/err" || rc=$?
((rc == 2)) || { cat "$WORK/err" >&2; fail "a file of many errors: exit $rc"; }
for want in "many.conf:11: unknown key 'intervall' in \[batch\]" "many.conf:14: unknown section \[bach\]" \
            "many.conf:12: --max-per-partition: 0 is not" "many.conf:13: --mode: expected" \
            "many.conf:4: --db: ssl-ca '$WORK/no-such-ca.pem': cannot read it: No such file"; do
  grep -q "^ktally: --config: .*$want" "$WORK/err" || { cat "$WORK/err" >&2; fail "config --check does not report '$want'"; }
done
[[ $(wc -l < "$WORK/err") == 5 ]] || { cat "$WORK/err" >&2; fail "five errors, not one line each"; }
bad "bad.conf:2: --db-password-file: cannot read '$WORK/no-such-pw'" "[mysql]\npassword-file = $WORK/no-such-pw\n"
# A run is refused the same way, before it connects.
rc=0; "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" \
  --db "$db_uri?ssl-mode=verify-ca&ssl-ca=$WORK/no-such-ca.pem" 2> "$WORK/err" || rc=$?
((rc == 2)) && grep -q "ssl-ca '$WORK/no-such-ca.pem': cannot read it" "$WORK/err" \
  || { cat "$WORK/err" >&2; fail "run with an ssl-ca that does not exist: exit $rc"; }

# [mysql] uri beside ssl-mode (no ssl-ca): the uri used to win in silence,
# and config --check --connect connected unverified, exit 0. Refused now,
# one line naming the keys; so is a --db flag that would drop the file's TLS.
printf '[mysql]\nuri = %s?socket=%s\nssl-mode = verify-identity\n' "$db_uri" "$KT_MYSQL_SOCKET" \
  > "$WORK/uri-tls.conf"
rc=0; "$KTALLY" config --check --connect --config "$WORK/uri-tls.conf" --brokers "$KT_BROKERS" \
  --topic "$topic" > /dev/null 2> "$WORK/err" || rc=$?
((rc == 2)) && [[ $(wc -l < "$WORK/err") == 1 ]] \
  && grep -q "uri-tls.conf:2: \[mysql\] uri is the whole database, and ssl-mode (line 3)" "$WORK/err" \
  || { cat "$WORK/err" >&2; fail "[mysql] uri beside ssl-mode: exit $rc"; }
printf '[mysql]\nhost = %s\nport = %s\nuser = %s\ndatabase = %s\nssl-mode = verify-identity\n' \
  "$KT_MYSQL_HOST" "$KT_MYSQL_PORT" "$KT_MYSQL_USER" "$db" > "$WORK/keys-tls.conf"
rc=0; "$KTALLY" config --check --connect --config "$WORK/keys-tls.conf" --brokers "$KT_BROKERS" \
  --topic "$topic" --db "$db_uri" > /dev/null 2> "$WORK/err" || rc=$?
((rc == 2)) && grep -q "the file's TLS (ssl-mode verify-identity)" "$WORK/err" \
  || { cat "$WORK/err" >&2; fail "--db dropping the file's TLS: exit $rc"; }

# samples/ktally.conf documents every key: each one must be known.
grep -v '^password-file' "$KT_SRC/samples/ktally.conf" > "$WORK/sample.conf"
"$KTALLY" config --check --config "$WORK/sample.conf" > /dev/null 2> "$WORK/err" \
  || { cat "$WORK/err" >&2; fail "samples/ktally.conf does not pass config --check"; }
rc=0; "$KTALLY" run --config "$WORK/nonexistent.conf" 2> "$WORK/err" || rc=$?
[[ $rc == 2 ]] || fail "a missing config file: exit $rc"
note "$TEST_NAME: a file-configured run exact, flags override, 11 bad files refused with their line, secrets hidden"
