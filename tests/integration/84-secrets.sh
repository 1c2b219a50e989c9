#!/usr/bin/env bash
# Secrets: the MySQL password never shows in ps, in logs or in errors; it
# can come from MYSQL_PWD, --db-password-file or --db-defaults-file; a
# server without TLS is refused instead of used in plain text (TLS that
# works and is verified: 213-mysql-tls); Kafka security
# properties pass through -X, are never logged and are blanked from ps; a
# password file others may read, or an empty one, is refused.
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

db_uri=$(kt_new_db secrets); db=$(kt_db_name "$db_uri")
topic=$(kt_new_topic secrets 2)
kt_gen "$topic" --lines 2000 --seed 84 --truth "$WORK/truth" > /dev/null
host_db="$KT_MYSQL_HOST:$KT_MYSQL_PORT/$db"
pw=$KT_MYSQL_PASSWORD
run() { "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --interval 0 --exit-when-idle "$@"; }

# 1. A password in the URI, and the value of every sensitive -X in every
# spelling (issue 11 item 13), are blanked from the process's argv.
"$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "mysql://kt:$pw@$host_db" \
  --interval 5 -X sasl.password=K4fkaSecret1 -Xssl.key.password=K4fkaSecret2 \
  --kafka-property=sasl.oauthbearer.config="principal=K4fkaSecret3 x=y" \
  --kafka-property ssl.keystore.password=K4fkaSecret4 -vX sasl.username=K4fkaSecret5 \
  -X security.protocol=PLAINTEXT --log-format json 2> "$WORK/ps.log" &
pid=$!; KT_CHILDREN+=("$pid")
kt_wait_for 20 kt_log_has start "$WORK/ps.log" || fail "ktally did not start"
tr '\0' ' ' < "/proc/$pid/cmdline" > "$WORK/cmdline"
if grep -q "$pw" "$WORK/cmdline"; then fail "the password shows in ps: $(cat "$WORK/cmdline")"; fi
if grep -q "K4fkaSecret" "$WORK/cmdline"; then fail "a Kafka secret shows in ps: $(cat "$WORK/cmdline")"; fi
grep -q "mysql://kt:xxxxxx@" "$WORK/cmdline" || fail "argv was not scrubbed: $(cat "$WORK/cmdline")"
grep -q " -X security.protocol=PLAINTEXT" "$WORK/cmdline" || fail "a harmless -X was scrubbed too"
if grep -q "K4fkaSecret" "$WORK/ps.log"; then fail "a Kafka secret shows in the log"; fi
# (SIGTERM abandons a batch in flight: wait until everything is committed.)
all_in() { [[ $(kt_offset_sum "$db" "$topic" 2> /dev/null) == 2000 ]]; }
kt_wait_for 20 all_in || fail "the run did not commit the 2000 records"
kill -TERM "$pid"; wait "$pid" || fail "SIGTERM: non-zero exit"
kt_check_counts "$db" "$WORK/truth"

# 2. The other ways in, each a full run.
printf '%s\n' "$pw" > "$WORK/pw"; chmod 600 "$WORK/pw"
run --db "mysql://kt@$host_db" --db-password-file "$WORK/pw" 2> "$WORK/a.log" || fail "--db-password-file"
printf '[client]\npassword=%s\n' "$pw" > "$WORK/my.cnf"
run --db "mysql://kt@$host_db" --db-defaults-file "$WORK/my.cnf" 2> "$WORK/b.log" || fail "--db-defaults-file"
MYSQL_PWD=$pw run --db "mysql://kt@$host_db" 2> "$WORK/c.log" || fail "MYSQL_PWD"
rc=0; run --db "mysql://kt@$host_db" --db-password-file "$WORK/nope" 2> "$WORK/d.log" || rc=$?
[[ $rc == 2 ]] || fail "a missing password file: exit $rc, expected 2"
# Like ssh with a key: a password file group or others may read or write
# is refused, and so is one without a password; one line, exit 2.
refused() {  # refused PATTERN FILE
  local rc=0
  run --db "mysql://kt@$host_db" --db-password-file "$2" > "$WORK/out" 2>&1 || rc=$?
  [[ $rc == 2 && $(wc -l < "$WORK/out") == 1 ]] && grep -q -- "$1" "$WORK/out" \
    || { cat "$WORK/out" >&2; fail "password file $2: exit $rc, expected 2 saying '$1'"; }
  if grep -q "$pw" "$WORK/out"; then fail "the password shows in the error"; fi
}
for mode in 644 640 604 660 622; do
  cp "$WORK/pw" "$WORK/pw-$mode"; chmod "$mode" "$WORK/pw-$mode"
  # Not root's: root may give its group read access (0640, as a Kubernetes
  # Secret for an fsGroup), test-cli covers that.
  if [[ $(id -u) == 0 ]]; then chown 65534 "$WORK/pw-$mode"; fi
  refused "is readable or writable by group or others (mode 0$mode)" "$WORK/pw-$mode"
done
: > "$WORK/pw-empty"; chmod 600 "$WORK/pw-empty"
refused "is empty: no password" "$WORK/pw-empty"
printf '\n%s\n' "$pw" > "$WORK/pw-blank"; chmod 600 "$WORK/pw-blank"
refused "is empty: no password" "$WORK/pw-blank"

# 3. Wrong passwords, verbose: never echoed anywhere.
for wrong in "mysql://kt:Wr0ngPW@$host_db" ; do
  rc=0; run --db "$wrong" --verbose > "$WORK/out" 2>&1 || rc=$?
  [[ $rc == 3 ]] || fail "wrong password: exit $rc, expected 3"
  if grep -q "Wr0ngPW" "$WORK/out"; then fail "the wrong password shows in the output"; fi
done
printf 'S3cretInFile\n' > "$WORK/pw2"; chmod 600 "$WORK/pw2"
rc=0; run --db "mysql://kt@$host_db" --db-password-file "$WORK/pw2" --verbose > "$WORK/out" 2>&1 || rc=$?
[[ $rc == 3 ]] && ! grep -q S3cretInFile "$WORK/out" || fail "password file: exit $rc or the password leaked"

# 4. Kafka security properties: passed to librdkafka, never logged.
rc=0
run --db "mysql://kt@$host_db" --db-password-file "$WORK/pw" --verbose --startup-timeout 3 \
  -X security.protocol=SASL_PLAINTEXT -X sasl.mechanisms=PLAIN -X sasl.username=kt \
  -X sasl.password=K4fkaSecret > "$WORK/out" 2>&1 || rc=$?
if grep -q K4fkaSecret "$WORK/out"; then fail "sasl.password shows in the output"; fi
rc=0; run --db "mysql://kt@$host_db" -X sasl.password.bogus=K4fkaSecret > "$WORK/out" 2>&1 || rc=$?
[[ $rc == 2 ]] && ! grep -q K4fkaSecret "$WORK/out" || fail "a bad -X property: exit $rc or its value leaked"

# 5. TLS. A server without TLS is refused instead of used in plain text
# (the services' own offers TLS: 213-mysql-tls verifies it), here one
# started without it.
tls=$WORK/notls; mkdir -p "$tls"
mariadb-install-db --no-defaults --datadir="$tls/data" --auth-root-authentication-method=normal \
  --skip-test-db > /dev/null 2>&1 || fail "mariadb-install-db failed"
port=$((KT_MYSQL_PORT + 1))
while (exec 3<> "/dev/tcp/127.0.0.1/$port") 2> /dev/null; do port=$((port + 1)); done
mariadbd --no-defaults --datadir="$tls/data" --socket="$tls/sock" --port="$port" \
  --bind-address=127.0.0.1 --user=root --pid-file="$tls/pid" --log-error="$tls/err" --skip-ssl &
KT_CHILDREN+=($!)
kt_wait_for 30 mariadb-admin -S "$tls/sock" -uroot ping > /dev/null 2>&1 || fail "the MariaDB without TLS did not start"
mariadb -S "$tls/sock" -uroot -e "CREATE DATABASE t; CREATE USER 'kt'@'%' IDENTIFIED BY '$pw';
  GRANT ALL ON t.* TO 'kt'@'%'"
rc=0; run --db "mysql://kt@127.0.0.1:$port/t?ssl-mode=required" --db-password-file "$WORK/pw" > "$WORK/out" 2>&1 || rc=$?
[[ $rc == 3 && $(wc -l < "$WORK/out") == 1 ]] && grep -qi "ssl\|tls" "$WORK/out" \
  || { cat "$WORK/out" >&2; fail "ssl-mode=required on a server without TLS: exit $rc"; }
mariadb-admin -S "$tls/sock" -uroot shutdown
note "$TEST_NAME: argv scrubbed, 3 password sources, nothing leaked, plain text refused"
