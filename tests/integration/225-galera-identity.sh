#!/usr/bin/env bash
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
# Galera: the database's identity is one on every node (made on the node a
# job's first start creates the schema on, replicated with it) and stays
# one across a node killed -9 and rejoined (a state transfer). ktally is
# given the three nodes and, last, an unrelated server (the second private
# MariaDB, with a ktally database of the same name and its own identity):
# the writer node killed, it moves to another node of the cluster without
# a refusal, and never writes the unrelated server; exact, audit clean
# (KT_MODE transactional or idempotent). Red if the nodes held identities
# of their own (every failover refused), if a rejoin changed it, or if a
# node were taken for the unrelated server. Needs `scripts/services start
# --mysql galera`.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/faults.sh"
source "$(dirname "$0")/ha.sh"

ha_need galera
t0=$SECONDS
kt_other_mysql
db=$(kt_db_name "$(kt_new_db gid)")
topic=$(kt_new_topic gid 4)
kt_other_ktally_db "$db" "$KT_MODE"
list=$(ha_uri "$db" 1 2 3); list=${list%/"$db"},127.0.0.1:$KT_MYSQL_OTHER_PORT/$db
log=$WORK/ktally.log
run_args=(run --brokers "$KT_BROKERS" --topic "$topic" --db "$list" --mode "$KT_MODE"
          --interval 0 --max-per-partition 20 --log-format json)
kt_feed_start feed "$topic" 3000 3000
kt_supervise ktally "${run_args[@]}"
kt_wait_for 60 committed_since 5 || kt_sup_stuck ktally "no commits within 60 s"

identity_on() { ha_sql "$1" "$db" "SELECT id FROM ktally_database"; }
same_everywhere() {
  local n id
  id=$(identity_on 1) || return 1
  [[ $id =~ ^[0-9a-f-]{36}$ && $id != "$other_id" ]] || return 1
  for n in 2 3; do [[ $(identity_on "$n") == "$id" ]] || return 1; done
}
kt_wait_for 30 same_everywhere || fail "the nodes do not hold one identity: $(identity_on 1) $(identity_on 2) $(identity_on 3)"
id=$(identity_on 1)

w=$(ha_writer "$db")
ha_kill "$w"
on_other_node() { [[ $(ha_writers "$db") =~ ^[0-9]$ && $(ha_writers "$db") != "$1" ]]; }
kt_wait_for 60 on_other_node "$w" || kt_sup_stuck ktally "ktally did not move off the killed node $w"
kt_wait_for 60 committed_since "$(commits)" || kt_sup_stuck ktally "no commit on another node"
rejoin=$(ha_restart "$w")
kt_wait_for 120 ha_ready "$w" || fail "node $w did not rejoin"
[[ $(identity_on "$w") == "$id" ]] || fail "node $w rejoined with another identity: $(identity_on "$w"), not $id"

ha_use "$w"
ha_job_end
refusals=$(kt_log_count_if '.event == "db-skip" and .reason == "another-database"' "$log")
((refusals == 0)) || fail "ktally refused a node of its own cluster ($refusals times)"
[[ $(kt_other_sql "$db" "SELECT COUNT(*) FROM kafka_offset") == 0 ]] || fail "ktally wrote the unrelated server"
note "$TEST_NAME ($KT_MODE): one identity on the three nodes, kept by node $w's rejoin (${rejoin} ms);" \
  "moved $(kt_log_count db-server "$log") times, never to the unrelated server; exact, $((SECONDS - t0)) s"
