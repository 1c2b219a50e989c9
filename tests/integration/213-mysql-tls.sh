#!/usr/bin/env bash
# TLS to MariaDB, the server's certificate verified: the private MariaDB of
# scripts/services offers TLS with a certificate (127.0.0.1, localhost)
# from a test CA made with openssl (KT_MYSQL_CA). ktally counts exactly
# with ssl-mode=verify-ca&ssl-ca=CA, with ssl-ca alone (which means
# verify-ca) and with verify-identity, as a user the server accepts only
# over TLS (REQUIRE SSL); ssl-mode=required encrypts without verifying.
# What the verify modes check, measured with MariaDB Connector/C 3.3
# (libmariadb3 10.11): the chain AND the host name, both of them (a
# certificate of the same CA for another name is refused by verify-ca
# too). Refused with exit 3 and one line: a CA that did not sign the
# server's certificate, a certificate for another host (the server's
# certificate swapped and reloaded with FLUSH SSL, then put back); after
# the start-up timeout, a wrong password on the first server of a hosts
# list whose second is down (216-db-refused-one-server: why). Red if a count is
# off, a verify mode connects to a certificate it should refuse, required
# refuses an unverifiable one, a refusal hangs, waits out the start-up
# timeout or takes more than one line.
# broker: any — about MariaDB; Kafka is only the source of the lines
source "$(dirname "$0")/lib.sh"

[[ -r ${KT_MYSQL_CA:-} ]] ||
  fail "the services' MariaDB offers no TLS (no KT_MYSQL_CA: an older scripts/services started it): scripts/services stop, then start"
tls_dir=$(dirname "$KT_MYSQL_CA")
[[ -r $tls_dir/ca-key.pem && -r $tls_dir/server.pem ]] || fail "no CA key or server certificate in $tls_dir"
kt_sql mysql "SHOW VARIABLES LIKE 'have_ssl'" | grep -q YES || fail "the services' MariaDB has TLS off (have_ssl)"

topic=$(kt_new_topic mtls 2)
kt_gen "$topic" --lines 10000 --seed "$KT_SEED" --truth "$WORK/truth" > /dev/null
host="127.0.0.1:$KT_MYSQL_PORT"
# A user the server lets in over TLS only: a count made as this user went
# over TLS, whatever the client said.
tls_user=ktls_$RUN_ID
tls_pw=$(head -c 12 /dev/urandom | base64 | tr -d '/+=')
printf '%s\n' "$tls_pw" > "$WORK/pw"; chmod 600 "$WORK/pw"
kt_sql mysql "CREATE USER '$tls_user'@'127.0.0.1' IDENTIFIED BY '$tls_pw' REQUIRE SSL"
swapped=no
cleanup_tls() {
  [[ $swapped == no ]] || restore_cert
  kt_sql mysql "DROP USER IF EXISTS '$tls_user'@'127.0.0.1'" || true
  kt_cleanup
}
trap cleanup_tls EXIT

# counts NAME QUERY: a run as the TLS-only user with ?QUERY, exact.
counts() {
  local name=$1 query=$2 db
  db=${name//-/_}_$RUN_ID
  kt_sql mysql "CREATE DATABASE $db; GRANT ALL ON $db.* TO '$tls_user'@'127.0.0.1'"
  "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "mysql://$tls_user@$host/$db?$query" \
    --db-password-file "$WORK/pw" --exit-when-idle --interval 0 2> "$WORK/$name.log" \
    || { cat "$WORK/$name.log" >&2; fail "$name: ktally over TLS ($query) failed"; }
  kt_check_counts "$db" "$WORK/truth"
}
# refused NAME QUERY: exit 3 within 10 s, one line (-q: nothing else).
refused() {
  local name=$1 query=$2 rc=0 t0=$SECONDS
  timeout 30 "$KTALLY" run -q --brokers "$KT_BROKERS" --topic "$topic" \
    --db "mysql://$tls_user@$host/refused_$RUN_ID?$query" --db-password-file "$WORK/pw" \
    --exit-when-idle --startup-timeout 5s > /dev/null 2> "$WORK/$name.err" || rc=$?
  ((rc == 3)) || { cat "$WORK/$name.err" >&2; fail "$name: exit $rc, expected 3"; }
  (($(wc -l < "$WORK/$name.err") == 1)) || { cat "$WORK/$name.err" >&2; fail "$name: more than one line"; }
  ((SECONDS - t0 <= 10)) || fail "$name: took $((SECONDS - t0)) s"
  grep -qi "ssl\|tls\|certificate" "$WORK/$name.err" || fail "$name: the line does not name TLS: $(cat "$WORK/$name.err")"
  ! grep -qF -- "$tls_pw" "$WORK/$name.err" || fail "$name: the password leaked"
  note "$name ($((SECONDS - t0)) s): $(cat "$WORK/$name.err")"
}
kt_sql mysql "CREATE DATABASE refused_$RUN_ID; GRANT ALL ON refused_$RUN_ID.* TO '$tls_user'@'127.0.0.1'"

# Plain text is refused by the server for this user: the checks below mean something.
rc=0; "$KTALLY" run -q --brokers "$KT_BROKERS" --topic "$topic" --db "mysql://$tls_user@$host/refused_$RUN_ID" \
  --db-password-file "$WORK/pw" --exit-when-idle --startup-timeout 5s 2> "$WORK/plain.err" || rc=$?
((rc == 3)) || { cat "$WORK/plain.err" >&2; fail "the REQUIRE SSL user got in without TLS (exit $rc)"; }

counts verify-ca "ssl-mode=verify-ca&ssl-ca=$KT_MYSQL_CA"
counts ca-alone "ssl-ca=$KT_MYSQL_CA"
counts verify-identity "ssl-mode=verify-identity&ssl-ca=$KT_MYSQL_CA"
counts required "ssl-mode=required"

# A CA that did not sign the server's certificate.
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$WORK/other-ca.key" -out "$WORK/other-ca.pem" -days 1 \
  -subj "/CN=another CA" > /dev/null 2>&1 || fail "openssl could not make a second CA"
refused wrong-ca "ssl-mode=verify-ca&ssl-ca=$WORK/other-ca.pem"

# A certificate of the same CA for another host name: swapped in, reloaded
# (FLUSH SSL), and put back whatever happens.
cp "$tls_dir/server.pem" "$WORK/server.pem.orig"
cp "$tls_dir/server-key.pem" "$WORK/server-key.pem.orig"
restore_cert() {
  cp "$WORK/server.pem.orig" "$tls_dir/server.pem"
  cp "$WORK/server-key.pem.orig" "$tls_dir/server-key.pem"
  kt_sql mysql "FLUSH SSL" || true
  swapped=no
}
openssl req -newkey rsa:2048 -nodes -keyout "$WORK/elsewhere.key" -out "$WORK/elsewhere.csr" \
  -subj "/CN=elsewhere.invalid" > /dev/null 2>&1 &&
printf 'subjectAltName=DNS:elsewhere.invalid\n' > "$WORK/elsewhere.ext" &&
openssl x509 -req -in "$WORK/elsewhere.csr" -CA "$KT_MYSQL_CA" -CAkey "$tls_dir/ca-key.pem" \
  -CAcreateserial -CAserial "$WORK/ca.srl" -out "$WORK/elsewhere.pem" -days 1 \
  -extfile "$WORK/elsewhere.ext" > /dev/null 2>&1 || fail "openssl could not make the other host's certificate"
swapped=yes
cp "$WORK/elsewhere.pem" "$tls_dir/server.pem"
cp "$WORK/elsewhere.key" "$tls_dir/server-key.pem"
kt_sql mysql "FLUSH SSL"
refused other-host-verify-ca "ssl-mode=verify-ca&ssl-ca=$KT_MYSQL_CA"
refused other-host-verify-identity "ssl-mode=verify-identity&ssl-ca=$KT_MYSQL_CA"
counts other-host-required "ssl-mode=required"
restore_cert
counts restored "ssl-mode=verify-ca&ssl-ca=$KT_MYSQL_CA"
# A wrong password on the first server of a hosts list, the next one
# down: the refusal is that server's (sql/HA.md), the other may come back,
# so the start-up timeout is waited out (3 s here), then exit 3, the last
# line naming both servers, never the password.
printf 'not-%s\n' "$tls_pw" > "$WORK/wrong-pw"; chmod 600 "$WORK/wrong-pw"
rc=0; t0=$SECONDS
timeout 30 "$KTALLY" run -q --brokers "$KT_BROKERS" --topic "$topic" \
  --db "mysql://$tls_user@$host,127.0.0.1:1/refused_$RUN_ID?ssl-mode=required" \
  --db-password-file "$WORK/wrong-pw" --exit-when-idle --startup-timeout 3s > /dev/null \
  2> "$WORK/denied-list.err" || rc=$?
((rc == 3)) || { cat "$WORK/denied-list.err" >&2; fail "denied-list: exit $rc, expected 3"; }
((SECONDS - t0 <= 10)) || fail "denied-list: took $((SECONDS - t0)) s of a 3 s start-up timeout"
tail -1 "$WORK/denied-list.err" | grep -q "Access denied.*127.0.0.1:1: cannot connect" \
  || { cat "$WORK/denied-list.err" >&2; fail "denied-list: the last line does not name both servers"; }
! grep -qF -- "$tls_pw" "$WORK/denied-list.err" || fail "denied-list: the password leaked"
note "denied-list ($((SECONDS - t0)) s): $(tail -1 "$WORK/denied-list.err")"
note "$TEST_NAME: verify-ca, ssl-ca alone, verify-identity, required: exact over TLS (REQUIRE SSL user); a wrong CA and another host's certificate refused in one line by both verify modes"
