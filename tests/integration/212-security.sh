#!/usr/bin/env bash
# Kafka security: the brokers' SASL_SSL listener (scripts/services: TLS
# from a test CA made with openssl, SCRAM-SHA-512 and PLAIN users, ACLs
# with StandardAuthorizer), and ACLs that allow the job's principal only
# its topic and its groups. ktally reads exactly through -X
# (security.protocol, sasl.*, ssl.ca.location) and through the [kafka]
# section of a config file, alone and in a consumer group; then each of
# these stops with exit 3 and ONE line, at once or within
# --startup-timeout, never waiting for ever: a wrong password and a CA
# that did not sign the brokers' certificate at the first refusal (within
# 5 s of a 20 s --startup-timeout: retrying cannot heal them), a topic without any ACL, a topic
# the principal may describe but not read (a Fetch refused), a group
# without an ACL, another principal. No password appears in `ps`, the
# logs, `status` or /metrics. SCRAM: librdkafka before 2.6.1 cannot
# authenticate to Kafka 4.x (its issue 4895: right passwords rejected as
# invalid credentials), so on 4.x ktally must refuse SCRAM in one line
# naming that, and the rest runs with PLAIN; on 3.9 with SCRAM-SHA-512.
# Red if a count is off, a refusal hangs (the Fetch refused used to stall
# and retry for ever, the group member to wait for ever), a wrong password
# or CA waits out the start-up timeout, a refusal takes more than one
# line, or a secret leaks.
# broker: apache — SASL_SSL, certificates and ACLs (StandardAuthorizer) need real brokers; the mock has no security
source "$(dirname "$0")/lib.sh"

[[ -n ${KT_KAFKA_SASL_BROKERS:-} && -r ${KT_KAFKA_SASL_USERS:-} ]] ||
  fail "the services have no SASL_SSL listener (an older scripts/services started them): scripts/services stop, then start --kafka apache"
read -r user password < <(awk '$1 == "ktjob"' "$KT_KAFKA_SASL_USERS")
read -r intruder intruder_password < <(awk '$1 == "intruder"' "$KT_KAFKA_SASL_USERS")
[[ -n $password && -n $intruder_password ]] || fail "$KT_KAFKA_SASL_USERS lacks the users ktjob and intruder"

topic=$(kt_new_topic sec 3)
group=gsec_$RUN_ID
kt_admin acl "User:$user" topic "$topic" read,describe || fail "cannot add the topic's ACL"
kt_admin acl "User:$user" group "ktally-$topic" read,describe || fail "cannot add the job's group ACL"
kt_admin acl "User:$user" group "$group" read,describe || fail "cannot add the group's ACL"
kt_gen "$topic" --lines 20000 --seed "$KT_SEED" --truth "$WORK/truth" > /dev/null

# refused NAME SECONDS ARGS...: `ktally run ARGS` exits 3 within SECONDS,
# saying exactly one line (-q: nothing else), which is echoed.
refused() {
  local name=$1 within=$2 rc=0 t0=$SECONDS; shift 2
  timeout $((within + 10)) "$KTALLY" run -q "$@" --exit-when-idle > /dev/null 2> "$WORK/$name.err" || rc=$?
  ((rc != 124)) || fail "$name: still running after $((within + 10)) s (a refusal must not wait for ever)"
  ((rc == 3)) || { cat "$WORK/$name.err" >&2; fail "$name: exit $rc, expected 3"; }
  (($(wc -l < "$WORK/$name.err") == 1)) || { cat "$WORK/$name.err" >&2; fail "$name: more than one line"; }
  ((SECONDS - t0 <= within)) || fail "$name: took $((SECONDS - t0)) s, more than $within"
  grep -q '^ktally: ' "$WORK/$name.err" || fail "$name: the line is not 'ktally: ...': $(cat "$WORK/$name.err")"
  note "$name ($((SECONDS - t0)) s): $(cat "$WORK/$name.err")"
}
tls=(-X security.protocol=SASL_SSL -X "ssl.ca.location=$KT_KAFKA_CA")
sasl_as() { echo "-X sasl.mechanisms=$1 -X sasl.username=$2 -X sasl.password=$3"; }

# SCRAM-SHA-512: on 3.9 the mechanism of this test; on 4.x refused in one
# line, before any password is sent.
if [[ $KT_KAFKA_LINE == 3.9 ]]; then
  echo "$password" | "$KT_SERVICES" scram-user "$user" > /dev/null || fail "cannot set the SCRAM credentials of $user"
  echo "$intruder_password" | "$KT_SERVICES" scram-user "$intruder" > /dev/null \
    || fail "cannot set the SCRAM credentials of $intruder"
  # Each broker takes the credentials from the metadata log a moment
  # after ConfigCommand returns, and ktally takes a refusal as final:
  # every broker must accept them first.
  scram_ready() {
    local b
    for b in ${KT_KAFKA_SASL_BROKERS//,/ }; do
      timeout 5 "$KT_ADMIN" --brokers "$b" -X security.protocol=SASL_SSL -X "ssl.ca.location=$KT_KAFKA_CA" \
        -X sasl.mechanisms=SCRAM-SHA-512 -X "sasl.username=$1" -X "sasl.password=$2" topics > /dev/null 2>&1 || return 1
    done
  }
  kt_wait_for 30 scram_ready "$user" "$password" && kt_wait_for 30 scram_ready "$intruder" "$intruder_password" \
    || fail "the brokers did not all take the SCRAM credentials within 30 s"
  mechanism=SCRAM-SHA-512
else
  scram_db=$(kt_new_db secscram)
  # shellcheck disable=SC2046
  refused scram-on-kafka-4 5 --brokers "$KT_KAFKA_SASL_BROKERS" --topic "$topic" --db "$scram_db" \
    "${tls[@]}" $(sasl_as SCRAM-SHA-512 "$user" "$password")
  grep -q "librdkafka 2.6.1 or later" "$WORK/scram-on-kafka-4.err" || fail "the SCRAM refusal does not say what works"
  mechanism=PLAIN
fi
# shellcheck disable=SC2207
auth=($(sasl_as "$mechanism" "$user" "$password"))

# Through -X, served while it runs: the password is in no argv, log line,
# status or metric.
db_uri=$(kt_new_db secx); db=$(kt_db_name "$db_uri")
"$KTALLY" run --brokers "$KT_KAFKA_SASL_BROKERS" --topic "$topic" --db "$db_uri" "${tls[@]}" \
  "${auth[@]}" --interval 0.3 --http 127.0.0.1:0 --log-format json 2> "$WORK/x.log" &
pid=$!; KT_CHILDREN+=("$pid")
offsets_reach() { [[ $(kt_offset_sum "$1" "$topic") == 20000 ]]; }
kt_wait_for 60 offsets_reach "$db" || { tail -3 "$WORK/x.log" >&2; fail "ktally over SASL_SSL did not count the topic within 60 s"; }
port=$(jq -Rr 'fromjson? | objects | select(.event == "http") | .port' "$WORK/x.log" | head -1)
curl -sf "http://127.0.0.1:$port/metrics" > "$WORK/metrics" || fail "no /metrics"
curl -sf "http://127.0.0.1:$port/" > "$WORK/page" || fail "no status page"
ps -ww -o args= -p "$pid" > "$WORK/ps"
grep -q "sasl.password" "$WORK/ps" || fail "ps does not show the -X words at all: $(cat "$WORK/ps")"
"$KTALLY" status --brokers "$KT_KAFKA_SASL_BROKERS" --topic "$topic" --db "$db_uri" "${tls[@]}" "${auth[@]}" \
  > "$WORK/status" 2>&1 || { cat "$WORK/status" >&2; fail "ktally status over SASL_SSL failed"; }
kt_stop "$pid" || fail "ktally run (-X) did not exit 0 on SIGTERM"
kt_check_counts "$db" "$WORK/truth"
for f in ps x.log metrics page status; do
  ! grep -qF -- "$password" "$WORK/$f" || fail "the SASL password appears in $f"
done

# Through a config file, alone and as a consumer group.
cat > "$WORK/ktally.conf" <<EOF
[kafka]
brokers = $KT_KAFKA_SASL_BROKERS
topic = $topic
security.protocol = SASL_SSL
ssl.ca.location = $KT_KAFKA_CA
sasl.mechanisms = $mechanism
sasl.username = $user
sasl.password = $password
EOF
chmod 600 "$WORK/ktally.conf"
conf_uri=$(kt_new_db secconf); conf_db=$(kt_db_name "$conf_uri")
"$KTALLY" run --config "$WORK/ktally.conf" --db "$conf_uri" --exit-when-idle --interval 0 \
  2> "$WORK/conf.log" || { cat "$WORK/conf.log" >&2; fail "ktally --config over SASL_SSL failed"; }
kt_check_counts "$conf_db" "$WORK/truth"
group_uri=$(kt_new_db secgroup); group_db=$(kt_db_name "$group_uri")
timeout 60 "$KTALLY" run --config "$WORK/ktally.conf" --group "$group" --db "$group_uri" --exit-when-idle \
  --interval 0.3 2> "$WORK/group.log" || { cat "$WORK/group.log" >&2; fail "a group member over SASL_SSL failed"; }
kt_check_counts "$group_db" "$WORK/truth"
for f in conf.log group.log; do ! grep -qF -- "$password" "$WORK/$f" || fail "the SASL password appears in $f"; done

# Each refusal: one line, exit 3, no hang.
bad_db=$(kt_new_db secbad)
base=(--brokers "$KT_KAFKA_SASL_BROKERS" --db "$bad_db" "${tls[@]}")
# shellcheck disable=SC2046
# Credentials refused and a certificate not from the CA never heal: the
# exit comes at the first refusal, well under --startup-timeout (it used
# to take the whole timeout of retries).
refused wrong-password 5 "${base[@]}" --topic "$topic" --startup-timeout 20s \
  $(sasl_as "$mechanism" "$user" "not-$password")
grep -qi "authentication" "$WORK/wrong-password.err" || fail "the wrong password is not named as an authentication failure"
other_ca=$WORK/other-ca.pem
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$WORK/other-ca.key" -out "$other_ca" -days 1 \
  -subj "/CN=not the brokers' CA" > /dev/null 2>&1 || fail "openssl could not make a second CA"
refused wrong-ca 15 --brokers "$KT_KAFKA_SASL_BROKERS" --db "$bad_db" --topic "$topic" \
  -X security.protocol=SASL_SSL -X "ssl.ca.location=$other_ca" "${auth[@]}" --startup-timeout 20s
grep -q "certificate verify failed" "$WORK/wrong-ca.err" || fail "the wrong CA is not named as a failed verification"
no_acl=$(kt_new_topic secnoacl 2)
refused topic-without-acl 5 "${base[@]}" "${auth[@]}" --topic "$no_acl"
describe_only=$(kt_new_topic secdescribe 2)
kt_admin acl "User:$user" topic "$describe_only" describe || fail "cannot add the describe ACL"
kt_admin acl "User:$user" group "ktally-$describe_only" read,describe || fail "cannot add its group's ACL"
kt_gen "$describe_only" --lines 100 --seed 1 > /dev/null
refused topic-read-refused 5 "${base[@]}" "${auth[@]}" --topic "$describe_only"
refused group-without-acl 5 "${base[@]}" "${auth[@]}" --topic "$topic" --group "nogroup_$RUN_ID"
# shellcheck disable=SC2046
refused another-principal 5 "${base[@]}" --topic "$topic" --startup-timeout 5s $(sasl_as "$mechanism" "$intruder" "$intruder_password")
for f in "$WORK"/*.err; do ! grep -qF -- "$password" "$f" || fail "the SASL password appears in $(basename "$f")"; done
note "$TEST_NAME: Kafka $KT_KAFKA_VERSION, $mechanism over SASL_SSL: -X, config file and group exact (20000 lines each); 6 refusals in one line each; no password in ps, logs, status, /metrics"
