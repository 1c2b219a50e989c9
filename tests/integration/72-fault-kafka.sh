#!/usr/bin/env bash
# Kafka faults while ktally reads: brokers down for 1-2.5 s and up again
# (any broker, the leader of a partition being read, two at once), a
# leader moved mid-read, and request errors queued for Fetch and
# ListOffsets, cluster-wide and on a partition's leader. Each kind at least
# once, in a seeded order, while data keeps arriving. ktally must ride all
# of it out by itself (librdkafka retries, the 30 s stall timeout and the
# batch retry with backoff); the counts stay exact.
# broker: mock — injects protocol errors per request (errors, broker-errors), pins leaders and takes brokers down without moving leadership: only the mock's control socket does that
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/faults.sh"

ROUNDS=${KT_ROUNDS:-1}  # passes over the list of fault kinds
partitions=6
db_uri=$(kt_new_db fkafka); db=$(kt_db_name "$db_uri")
topic=$(kt_new_topic fkafka $partitions)
s1=$((KT_SEED * 2 + 1))
KT_FAULT_BROKERS=yes

# Leaders spread over the three brokers, known rather than guessed.
for ((p = 0; p < partitions; p++)); do
  kt_ctl leader "$topic" "$p" $((1 + p % 3)) > /dev/null || fail "cannot pin the leader of $topic/$p"
done

# A backlog to start with, and data arriving during every fault.
kt_gen "$topic" --lines 30000 --seed "$s1" --truth "$WORK/t1" > "$WORK/gen1" \
  || fail "kt-gen (seed $s1) failed"

run_args=(run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --mode "$KT_MODE"
          --interval 0 --max-per-partition 1000 --log-format json)
commits() { kt_commits "$WORK/ktally.log"; }
committed_since() { (($(commits) > $1)); }

leader_of() {  # leader_of PARTITION: as the cluster's metadata says
  kcat -b "$KT_BROKERS" -m 5 -L -t "$topic" 2>/dev/null \
    | sed -n "s/.*partition $1, leader \([0-9-]*\),.*/\1/p"
}

outage() {  # outage BROKER...: down for 1-2.5 s, then up
  local b
  for b in "$@"; do kt_ctl down "$b" > /dev/null || fail "ctl down $b"; done
  kt_sleep_ms 1000 2500
  for b in "$@"; do kt_ctl up "$b" > /dev/null || fail "ctl up $b"; done
}

inject() {  # inject KIND: one fault; prints what it did
  local p b other
  p=$(kt_rand $partitions)
  case $1 in
    down-any)
      b=$((1 + $(kt_rand 3))); outage "$b"; echo "broker $b down" ;;
    down-leader)
      b=$(leader_of "$p"); [[ -n $b ]] || fail "no leader for $topic/$p"
      outage "$b"; echo "leader $b of partition $p down" ;;
    down-two)
      b=$((1 + $(kt_rand 3))); other=$((1 + (b + $(kt_rand 2)) % 3))
      outage "$b" "$other"; echo "brokers $b and $other down" ;;
    move-leader)
      b=$(leader_of "$p"); other=$((1 + b % 3))
      kt_ctl leader "$topic" "$p" "$other" > /dev/null || fail "ctl leader"
      echo "partition $p leader $b -> $other" ;;
    fetch-not-leader)
      kt_ctl errors Fetch 5 NOT_LEADER_FOR_PARTITION > /dev/null || fail "ctl errors"
      echo "Fetch x5 NOT_LEADER_FOR_PARTITION" ;;
    fetch-timeout)
      kt_ctl errors Fetch 3 REQUEST_TIMED_OUT > /dev/null || fail "ctl errors"
      echo "Fetch x3 REQUEST_TIMED_OUT" ;;
    listoffsets-lna)
      kt_ctl errors ListOffsets 3 LEADER_NOT_AVAILABLE > /dev/null || fail "ctl errors"
      echo "ListOffsets x3 LEADER_NOT_AVAILABLE" ;;
    listoffsets-timeout)
      kt_ctl errors ListOffsets 2 REQUEST_TIMED_OUT > /dev/null || fail "ctl errors"
      echo "ListOffsets x2 REQUEST_TIMED_OUT" ;;
    leader-fetch)
      b=$(leader_of "$p")
      kt_ctl broker-errors "$b" Fetch 4 NOT_LEADER_FOR_PARTITION > /dev/null || fail "ctl broker-errors"
      echo "leader $b: Fetch x4 NOT_LEADER_FOR_PARTITION" ;;
    leader-listoffsets)
      b=$(leader_of "$p")
      kt_ctl broker-errors "$b" ListOffsets 2 NOT_LEADER_FOR_PARTITION > /dev/null || fail "ctl broker-errors"
      echo "leader $b: ListOffsets x2 NOT_LEADER_FOR_PARTITION" ;;
    leader-slow-fetch)
      b=$(leader_of "$p")
      kt_ctl broker-errors "$b" Fetch 2 REQUEST_TIMED_OUT 1500 > /dev/null || fail "ctl broker-errors"
      echo "leader $b: Fetch x2 REQUEST_TIMED_OUT after 1.5 s" ;;
  esac
}

kinds=(down-any down-leader down-leader down-two move-leader fetch-not-leader fetch-timeout
       listoffsets-lna listoffsets-timeout leader-fetch leader-listoffsets leader-slow-fetch)
t0=$SECONDS
kt_supervise ktally "${run_args[@]}"
kt_feed_start feed "$topic" 2000 2000
faults=0 downs=0 worst=0
for ((round = 0; round < ROUNDS; round++)); do
  order=$(for k in "${kinds[@]}"; do echo "$RANDOM $k"; done | sort -n | cut -d' ' -f2)
  for kind in $order; do
    kt_sleep_ms 100 600
    what=$(inject "$kind")
    faults=$((faults + 1)); [[ $kind == down-* ]] && downs=$((downs + 1))
    # Recovered once a batch commits after the fault is over: every batch
    # plans (and waits for) every partition that has new data.
    before=$(commits) t=$(date +%s%N)
    kt_wait_for 45 committed_since "$before" || kt_sup_stuck ktally "no commit within 45 s after: $what"
    took=$((($(date +%s%N) - t) / 1000000)); ((took > worst)) && worst=$took
    echo "$(date '+%T.%3N') $what: next commit after $took ms" >> "$WORK/faults.txt"
  done
done
kt_feed_stop feed
produced=$(($(kt_gen_messages "$WORK/gen1") + $(<"$WORK/feed.messages")))
kt_sum_truths "$WORK/t1" "$WORK/feed.truth" > "$WORK/truth"
# The producers retry through the outages, and the mock broker sometimes
# stores a retried batch twice (seen: 3 records, same timestamps, right
# after a leader came back): the topic then holds more than kt-gen says,
# and what it holds is the truth ktally must count.
messages=$(kt_high_sum "$topic")
((messages >= produced)) || fail "the topic holds $messages records, kt-gen produced $produced"
dups=$((messages - produced))
if ((dups > 0)); then kt_reference_truth "$topic" "$WORK/truth"; fi
kt_wait_for 60 kt_offsets_reach "$db" "$topic" "$messages" \
  || kt_sup_stuck ktally "ktally did not reach the end within 60 s of the last fault"
kt_sup_stop ktally
exits=$(kt_sup_check ktally); n_exits=${exits%% *}
kt_fault_verify "$db" "$topic" "$WORK/truth" "$messages" "${run_args[@]}"

retries=$(kt_log_count retry "$WORK/ktally.log")
if ((n_exits > 0)); then note "ktally exits:"; kt_sup_exit_reasons ktally | sed 's/^/#   /'; fi
note "$TEST_NAME: $faults Kafka faults ($downs outages of 1-2.5 s), $retries retried batches," \
  "slowest recovery $worst ms, ktally exits: $exits, $(commits) commits, $dups records stored twice by the mock," \
  "$((30000 + $(<"$WORK/feed.lines"))) lines ($messages records), exact, $((SECONDS - t0)) s"
