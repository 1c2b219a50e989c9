#!/usr/bin/env bash
# The Apache Kafka services that the real-Kafka tier builds on
# (scripts/services start --kafka apache, lib.sh): all brokers answer;
# kt_new_topic makes a topic of the test's partitions, replication factor
# and configs; partitions can be added; kt_broker kill/restart/pause/resume
# act on one broker process, whose partitions leave the ISR and come back;
# and ktally counts exactly what an acks=all producer wrote while a broker
# was dead. Red if a broker is missing, a topic has other partitions,
# replicas or configs than asked, a dead or paused broker stays in the ISR
# or never comes back into it, or a count is off.
# broker: apache — broker processes to kill and pause, topic configs and replication: the mock has none of them
source "$(dirname "$0")/lib.sh"

[[ $(kcat -b "$KT_BROKERS" -L -J -m 10 | jq '.brokers | length') == "$KT_KAFKA_NODES" ]] \
  || fail "the cluster does not list its $KT_KAFKA_NODES brokers"

# A topic as the test asks for it.
compact=$(kt_new_topic compact 3 --replication 2 --config cleanup.policy=compact --config segment.ms=60000)
kt_admin describe "$compact" > "$WORK/compact.desc"
[[ $(wc -l < "$WORK/compact.desc") == 3 ]] || fail "$compact has $(wc -l < "$WORK/compact.desc") partitions, not 3"
grep -vq "replicas=[0-9]*,[0-9]* isr=" "$WORK/compact.desc" \
  && { cat "$WORK/compact.desc" >&2; fail "$compact is not on 2 replicas"; }
kt_admin config "$compact" > "$WORK/compact.conf"
grep -qx "cleanup.policy=compact" "$WORK/compact.conf" && grep -qx "segment.ms=60000" "$WORK/compact.conf" \
  || { cat "$WORK/compact.conf" >&2; fail "$compact lacks its configs"; }
kt_admin add-partitions "$compact" 5
[[ $(kt_watermarks "$compact" | wc -w) == 5 ]] || fail "$compact did not grow to 5 partitions"

db_uri=$(kt_new_db services); db=$(kt_db_name "$db_uri")
topic=$(kt_new_topic services 6)
in_isr() {  # in_isr NODE: whether NODE is in the ISR of every partition of $topic
  ! kt_admin describe "$topic" | grep -v "isr=\(.*,\)\?$1\(,\|$\)" | grep -q .
}
out_of_isr() { ! kt_admin describe "$topic" | grep -q "isr=\(.*,\)\?$1\(,\|$\)"; }
kt_gen "$topic" --lines 30000 --seed 200 --truth "$WORK/t1" > /dev/null

# Kill -9 the leader of partition 0: its partitions move, acks=all still
# works with two of three in sync, and it comes back into every ISR.
victim=$(kt_admin describe "$topic" | awk '$1 == 0 { sub("leader=", "", $2); print $2 }')
kt_broker kill "$victim"
kt_wait_for 30 out_of_isr "$victim" || { kt_admin describe "$topic" >&2; fail "broker $victim is still in an ISR 30 s after its kill"; }
kt_gen "$topic" --lines 30000 --seed 201 --truth "$WORK/t2" > /dev/null
kt_broker restart "$victim"
kt_admin wait-isr "$topic" 60 || fail "broker $victim did not come back into every ISR"
in_isr "$victim" || fail "broker $victim is not in every ISR after wait-isr"

# SIGSTOP: the controller fences the silent broker; SIGCONT brings it back.
paused=$(( victim % KT_KAFKA_NODES + 1 ))
kt_broker pause "$paused"
kt_wait_for 30 out_of_isr "$paused" || { kt_broker resume "$paused"; fail "paused broker $paused is still in an ISR after 30 s"; }
kt_gen "$topic" --lines 30000 --seed 202 --truth "$WORK/t3" > /dev/null
kt_broker resume "$paused"
kt_admin wait-isr "$topic" 60 || fail "resumed broker $paused did not come back into every ISR"

kt_sum_truths "$WORK/t1" "$WORK/t2" "$WORK/t3" > "$WORK/truth"
"$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --exit-when-idle --interval 0 \
  2> "$WORK/run.log" || { tail -5 "$WORK/run.log" >&2; fail "ktally run failed"; }
kt_check_counts "$db" "$WORK/truth"
kt_audit "$db_uri"
kt_admin delete "$compact" "$topic"
