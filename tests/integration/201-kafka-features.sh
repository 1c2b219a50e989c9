#!/usr/bin/env bash
# The start-up check of the protocol features librdkafka keeps (src/
# kfeatures.c). librdkafka before 2.11.1 turns a feature off when a broker
# no longer serves the old protocol versions it ties the feature to (its
# issue 4948; Kafka 4.0 removed old versions, KIP-896). ktally must then say
# so in one line, naming the broker, what it serves and what is missing,
# and exit 3 instead of misbehaving:
#  - a broker without FindCoordinator v0 (a private mock that announces
#    v1..v3 only): `run --group` stops with the line (before the check it
#    waited for a group coordinator until killed: red before), while a run
#    without --group, which needs no coordinator, still counts exactly;
#  - a broker without JoinGroup v0 and v1, as Apache Kafka 4.0.0 was:
#    Kerberos (sasl.mechanisms=GSSAPI) stops with the line naming Sasl;
#  - the services' own broker (the mock, or Apache Kafka in the real-Kafka
#    tier) passes the check, and the debug log says so.
# broker: any — the services' broker must pass; the brokers that fail are private mocks of the test
source "$(dirname "$0")/lib.sh"

# The services' broker: nothing turned off that a run, --group or not, needs.
db_uri=$(kt_new_db feat); db=$(kt_db_name "$db_uri")
topic=$(kt_new_topic feat 2)
kt_gen "$topic" --lines 2000 --seed 201 --truth "$WORK/truth" > /dev/null
"$KTALLY" run --verbose --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" \
  --group "g_$RUN_ID" --exit-when-idle --interval 0.5 2> "$WORK/ok.log" \
  || { tail -5 "$WORK/ok.log" >&2; fail "a --group run on the services' broker ($KT_KAFKA $KT_KAFKA_VERSION) failed"; }
grep -q "keeps every protocol feature this job needs" "$WORK/ok.log" \
  || fail "the check did not run against the services' broker"
kt_check_counts "$db" "$WORK/truth"

# A private mock broker whose ApiVersions answer leaves out old versions.
private_mock() {  # private_mock NAME API MIN MAX: starts it; $brokers is its address
  local name=$1 i
  "$KT_BROKER" --brokers 1 --control "$WORK/$name.ctl" --bootstrap-file "$WORK/$name.boot" \
    --pid-file "$WORK/$name.pid" > "$WORK/$name.out" 2>&1 &
  KT_CHILDREN+=($!)
  for ((i = 0; i < 200; i++)); do [[ -s $WORK/$name.boot ]] && break; sleep 0.05; done
  [[ -s $WORK/$name.boot ]] || fail "the private mock $name did not start"
  "$KT_BROKER" ctl --control "$WORK/$name.ctl" apiversion "$2" "$3" "$4" > /dev/null \
    || fail "cannot narrow $2 on the private mock $name"
  "$KT_BROKER" ctl --control "$WORK/$name.ctl" create "t_$name" 2 > /dev/null \
    || fail "cannot create a topic on the private mock $name"
  brokers=$(<"$WORK/$name.boot")
}

one_line() {  # one_line LOG FEATURE API: exit 3 came with one line naming the broker, FEATURE and API
  local log=$1 n
  n=$(grep -c "makes librdkafka [0-9.]* turn off its feature $2, which" "$log" || true)
  [[ $n == 1 ]] || { cat "$log" >&2; fail "expected one line about $2, found $n"; }
  grep -q "broker 127.0.0.1:[0-9]* (.*serving $3 v" "$log" \
    || { cat "$log" >&2; fail "the line names no broker, or not what it serves of $3"; }
}

# No FindCoordinator v0: consumer groups are gone, assigned partitions not.
private_mock nocoord FindCoordinator 1 3
"$KT_GEN" --brokers "$brokers" --topic t_nocoord --lines 1000 --seed 2011 --truth "$WORK/truth2" > /dev/null
db2_uri=$(kt_new_db feat2); db2=$(kt_db_name "$db2_uri")
rc=0
timeout 60 "$KTALLY" run --brokers "$brokers" --topic t_nocoord --db "$db2_uri" --group "g2_$RUN_ID" \
  --exit-when-idle --interval 0.5 2> "$WORK/nocoord.log" || rc=$?
[[ $rc == 3 ]] || { tail -5 "$WORK/nocoord.log" >&2; fail "run --group without a coordinator: exit $rc, not 3"; }
one_line "$WORK/nocoord.log" BrokerGroupCoordinator FindCoordinator
"$KTALLY" run --brokers "$brokers" --topic t_nocoord --db "$db2_uri" --exit-when-idle --interval 0.5 \
  2> "$WORK/nocoord2.log" || { tail -5 "$WORK/nocoord2.log" >&2; fail "a run without --group failed"; }
kt_check_counts "$db2" "$WORK/truth2"

# No JoinGroup v0 or v1 (Apache Kafka 4.0.0): no Kerberos.
private_mock nojoin JoinGroup 2 5
rc=0
timeout 60 "$KTALLY" run --brokers "$brokers" --topic t_nojoin --db "$db2_uri" --job gss \
  -X security.protocol=SASL_PLAINTEXT -X sasl.mechanisms=GSSAPI -X sasl.kerberos.kinit.cmd=true \
  --exit-when-idle --startup-timeout 20 2> "$WORK/nojoin.log" || rc=$?
[[ $rc == 3 ]] || { tail -5 "$WORK/nojoin.log" >&2; fail "GSSAPI without JoinGroup v0: exit $rc, not 3"; }
one_line "$WORK/nojoin.log" Sasl JoinGroup
[[ $(kt_sql "$db2" "SELECT COUNT(*) FROM kafka_offset WHERE job = 'gss'") == 0 ]] \
  || fail "the refused job stored offsets"
