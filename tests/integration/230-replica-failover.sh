#!/usr/bin/env bash
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
# Asynchronous replication: a primary (node 1) and its GTID replica (node
# 2). The replica's SQL thread is stopped, so that what the primary commits
# from then on never reaches it; then the primary dies (kill -9) and the
# replica is promoted, without those transactions. Two jobs, each ktally
# given both servers (--db with node 1 first), under a supervisor:
#
#   A ran before: the replica holds its first batches; it lost the last.
#     On the replica, before the promotion, the counts are exactly those
#     of the offsets it holds (transactional: a replay of [0, offset) into
#     a fresh table gives the same counts; both modes: `ktally audit` of
#     the replica alone is clean): counts and offsets went back together.
#     After the move, ktally reads the lost range again (a batch on the new
#     primary starts where the replica's offset stood).
#   B started after the SQL thread stopped: the replica lost its whole
#     ktally database (tables, the database's identity, ktally_job, every
#     batch). The running B cannot tell it from an unrelated server's empty
#     database: it refuses it (db-skip, another-database: "holds no ktally
#     identity ... restart ktally to start there anew") and waits; once
#     restarted, as the line says (kill -9 here, the supervisor starts it
#     again), ktally creates the tables, records the job again, and counts
#     from the start. A's ktally moves without a refusal: the replica
#     holds the identity A's database was made with.
#
# While node 1 is dead and node 2 still read-only, ktally skips node 2
# (db-skip, read-only); once node 2 is promoted it continues there by
# itself, with no exit. Node 1 then comes back read-only (fenced: it holds
# the lost transactions), and a restarted ktally skips it. The final
# tables are exact, `ktally jobs` lists both jobs, `ktally audit` is clean
# (KT_MODE transactional or idempotent).
#
# Red before: the hosts list did not exist; and with it alone, B exited
# ("Table ... doesn't exist": its tables were checked at start only) and
# its commits on the new primary did not record the job again (in memory,
# it had been recorded: `ktally jobs` lacked it). Needs `scripts/services
# start --mysql replica`; any broker.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/faults.sh"
source "$(dirname "$0")/ha.sh"

ha_need replica
t0=$SECONDS

dbA=$(kt_db_name "$(kt_new_db rfa)"); dbB=$(kt_db_name "$(kt_new_db rfb)")
topicA=$(kt_new_topic rfa 3); topicB=$(kt_new_topic rfb 3)
kt_wait_for 30 ha_caught_up || fail "the replica does not catch up"
args() {  # args TOPIC DB: ktally run's arguments for that job
  echo run --brokers "$KT_BROKERS" --topic "$1" --db "$(ha_uri "$2" 1 2)" --mode "$KT_MODE" \
    --interval 0 --max-per-partition 30 --log-format json
}
read -r -a argsA <<< "$(args "$topicA" "$dbA")"
read -r -a argsB <<< "$(args "$topicB" "$dbB")"
commits() { kt_commits "$WORK/$1.log"; }
committed_since() { (($(commits "$1") > $2)); }

kt_feed_start feedA "$topicA" 2000 2000
kt_supervise A "${argsA[@]}"
kt_wait_for 60 committed_since A 5 || kt_sup_stuck A "A committed nothing in 60 s"
kt_wait_for 30 ha_caught_up || fail "the replica does not catch up"

# From here on, node 2 receives but applies nothing.
ha_root 2 "STOP SLAVE SQL_THREAD" || fail "cannot stop the replica's SQL thread"
kt_feed_start feedB "$topicB" 2000 2000
kt_supervise B "${argsB[@]}"
kt_wait_for 60 committed_since B 5 || kt_sup_stuck B "B committed nothing in 60 s"
kt_wait_for 60 committed_since A "$(($(commits A) + 10))" || kt_sup_stuck A "A stopped committing"

# What the replica holds of A: consistent on its own.
sum_on() { ha_sql "$1" "$2" "SELECT COALESCE(SUM(\`offset\`), 0) FROM kafka_offset WHERE job = '$3'"; }
replica_offsets=$(sum_on 2 "$dbA" "$topicA")
((replica_offsets > 0 && replica_offsets < $(sum_on 1 "$dbA" "$topicA"))) \
  || fail "the replica's offsets of A ($replica_offsets) are not behind the primary's"
[[ -z $(ha_sql 2 "$dbB" "SHOW TABLES") ]] || fail "the replica has B's tables"
"$KTALLY" audit --db "$(ha_uri "$dbA" 2)" > "$WORK/audit-replica.out" 2>&1 \
  || { cat "$WORK/audit-replica.out" >&2; fail "the replica's own audit of A failed"; }
if [[ $KT_MODE == transactional ]]; then
  ha_sql 2 "$dbA" "SELECT log_time, log_count FROM error_log ORDER BY log_time" > "$WORK/replica.tsv"
  mapfile -t held < <(ha_sql 2 "$dbA" "SELECT CONCAT(\`partition\`, ':', \`offset\`) FROM kafka_offset WHERE job = '$topicA' ORDER BY \`partition\`")
  until=$(printf '%s,' "${held[@]}"); from=$(printf '%s,' "${held[@]}" | sed 's/:[0-9]*,/:0,/g')
  ref=$(kt_db_name "$(kt_new_db rfref)")
  "$KTALLY" replay --brokers "$KT_BROKERS" --topic "$topicA" --db "$(ha_uri "$ref" 1)" \
    --from "${from%,}" --until "${until%,}" --table error_log 2> "$WORK/replay.log" \
    || { cat "$WORK/replay.log" >&2; fail "the replay of [0, ${until%,}) failed"; }
  ha_sql 1 "$ref" "SELECT log_time, log_count FROM error_log ORDER BY log_time" > "$WORK/prefix.tsv"
  diff -q "$WORK/replica.tsv" "$WORK/prefix.tsv" > /dev/null \
    || { diff "$WORK/replica.tsv" "$WORK/prefix.tsv" | head >&2
         fail "the replica's counts of A are not those of its offsets ${until%,}"; }
fi

# The primary dies; ktally finds only a read-only server left.
behind=$(($(sum_on 1 "$dbA" "$topicA") - replica_offsets))
ha_kill 1
killed_at=$(kt_epoch)
skipped() { (($(kt_log_count_if ".event == \"db-skip\" and .reason == \"read-only\" and .server == \"127.0.0.1:$(ha_port "$1")\"" "$WORK/$2.log") > $3)); }
kt_wait_for 30 skipped 2 A 0 || kt_sup_stuck A "A did not skip the read-only node 2"
HA_PROMOTED=1
ha_services promote-replica
promoted_at=$(kt_epoch)
on_node2() { [[ $(ha_writers "$1" | paste -sd,) == 2 ]]; }
refused() { (($(kt_log_count_if '.event == "db-skip" and .reason == "another-database"' "$WORK/$1.log") > 0)); }
kt_wait_for 60 refused B || kt_sup_stuck B "B did not refuse node 2, which holds nothing of its database"
kt_sup_kill9 B
! refused A || fail "A refused node 2, which holds its database's identity"
for job in A B; do
  db=db$job
  kt_wait_for 60 on_node2 "${!db}" || kt_sup_stuck "$job" "$job did not move to node 2"
  kt_wait_for 60 committed_since "$job" "$(commits "$job")" || kt_sup_stuck "$job" "$job does not commit on node 2"
done
moved_at=$(kt_epoch)

# The old primary back, read-only; a restarted ktally skips it.
ha_restart 1 > /dev/null
[[ $(ha_root 1 "SELECT @@read_only") == 1 ]] || fail "node 1 came back writable"
before=$(kt_log_count_if '.event == "db-skip" and .reason == "read-only"' "$WORK/A.log")
kt_sup_kill9 A
kt_wait_for 30 skipped 1 A 0 || kt_sup_stuck A "the restarted A did not skip the read-only node 1"
kt_wait_for 60 committed_since A "$(commits A)" || kt_sup_stuck A "the restarted A does not commit"

ha_use 2
summary=()
for job in A B; do
  kt_feed_stop "feed$job"
  db=db$job topic=topic$job args=args$job[@]
  messages=$(<"$WORK/feed$job.messages")
  kt_wait_for 60 kt_offsets_reach "${!db}" "${!topic}" "$messages" \
    || kt_sup_stuck "$job" "$job did not reach the end within 60 s"
  kt_sup_stop "$job"
  exits=$(kt_sup_check "$job")
  [[ $exits == 0 ]] || fail "$job exited by itself: $exits"
  kt_fault_verify "${!db}" "${!topic}" "$WORK/feed$job.truth" "$messages" "${!args}"
  # Its warnings (node 1 refused as read-only, the database found on the
  # second server) go to stderr, apart from the JSON.
  "$KTALLY" jobs --db "$(ha_uri "${!db}" 1 2)" --json > "$WORK/jobs$job.json" 2> "$WORK/jobs$job.err" \
    || { cat "$WORK/jobs$job.json" "$WORK/jobs$job.err" >&2; fail "ktally jobs failed for $job"; }
  # Its identity recorded (kind, mode...), not only offsets found.
  jq -e --arg j "${!topic}" --arg m "$KT_MODE" 'map(select(.job == $j and .kind == "count" and .mode == $m)) | length == 1' \
    "$WORK/jobs$job.json" > /dev/null \
    || { cat "$WORK/jobs$job.json" "$WORK/jobs$job.err" >&2; fail "ktally jobs on the new primary does not know what job $job is"; }
  summary+=("$job: $(kt_log_count retry "$WORK/$job.log") batches retried, $(commits "$job") commits")
done
# A read its lost range again: on node 2, batches start where the
# replica's offsets stood.
for p in "${held[@]:-}"; do
  [[ -n $p ]] || continue
  [[ $(ha_sql 2 "$dbA" "SELECT COUNT(*) FROM ktally_batches WHERE job = '$topicA' AND \`partition\` = ${p%%:*} AND from_offset = ${p#*:}") -ge 1 ]] \
    || fail "no batch of A on node 2 starts at ${p#*:} on partition ${p%%:*}: the lost range was not read again"
done

note "$TEST_NAME ($KT_MODE): A's replica was at least $behind offsets behind at the kill;" \
  "ktally wrote again $(awk -v a="$killed_at" -v b="$moved_at" 'BEGIN { printf "%.1f", b - a }') s after" \
  "the kill ($(awk -v a="$promoted_at" -v b="$moved_at" 'BEGIN { printf "%.1f", b - a }') s after the promotion);" \
  "${summary[0]}; ${summary[1]}; B recreated its tables on node 2; exact, $((SECONDS - t0)) s"
