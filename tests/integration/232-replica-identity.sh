#!/usr/bin/env bash
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
# A primary (node 1), its replica (node 2) and, last in ktally's hosts
# list, an unrelated server (the second private MariaDB, with a ktally
# database of the same name and its own identity). The replica holds the
# identity the primary made. The primary dies: while the replica is still
# read-only, the unrelated server is writable and answers, and is refused
# (db-skip, another-database, naming both identities), nothing written
# there; once the replica is promoted, ktally moves to it without a
# refusal and goes on; exact, audit clean (KT_MODE transactional or
# idempotent). Red before the identity: ktally took the unrelated server
# as new the moment the primary died, created its tables there and
# counted the whole topic again. Needs `scripts/services start --mysql
# replica`.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/faults.sh"
source "$(dirname "$0")/ha.sh"

ha_need replica
t0=$SECONDS
kt_other_mysql
db=$(kt_db_name "$(kt_new_db rid)")
topic=$(kt_new_topic rid 3)
kt_other_ktally_db "$db" "$KT_MODE"
list=$(ha_uri "$db" 1 2); list=${list%/"$db"},127.0.0.1:$KT_MYSQL_OTHER_PORT/$db
log=$WORK/ktally.log
run_args=(run --brokers "$KT_BROKERS" --topic "$topic" --db "$list" --mode "$KT_MODE"
          --interval 0 --max-per-partition 30 --log-format json)
kt_feed_start feed "$topic" 2000 2000
kt_supervise ktally "${run_args[@]}"
kt_wait_for 60 committed_since 5 || kt_sup_stuck ktally "no commits within 60 s"
kt_wait_for 30 ha_caught_up || fail "the replica does not catch up"
id=$(ha_sql 1 "$db" "SELECT id FROM ktally_database")
[[ $id =~ ^[0-9a-f-]{36}$ && $id != "$other_id" ]] || fail "identities: primary '$id', other '$other_id'"
[[ $(ha_sql 2 "$db" "SELECT id FROM ktally_database") == "$id" ]] || fail "the replica holds another identity"

ha_kill 1
refused() { (($(kt_log_count_if '.event == "db-skip" and .reason == "another-database"' "$log") > 0)); }
kt_wait_for 30 refused || kt_sup_stuck ktally "the unrelated server was not refused while the replica was read-only"
kt_log_match '.event == "db-skip" and .reason == "another-database" and (.message | contains("'"$other_id"'") and contains("'"$id"'"))' \
  "$log" || fail "the refusal does not name both identities"
HA_PROMOTED=1
ha_services promote-replica
before=$(kt_log_count_if '.event == "db-skip" and .reason == "another-database"' "$log")
on_node2() { [[ $(ha_writers "$db" | paste -sd,) == 2 ]]; }
kt_wait_for 60 on_node2 || kt_sup_stuck ktally "ktally did not move to the promoted replica"
kt_wait_for 60 committed_since "$(commits)" || kt_sup_stuck ktally "no commit on the promoted replica"
! kt_log_match '.event == "db-skip" and .reason == "another-database" and .server == "127.0.0.1:'"$(ha_port 2)"'"' "$log" \
  || fail "the promoted replica was refused"

ha_use 2
ha_job_end
[[ $(kt_other_sql "$db" "SELECT COUNT(*) FROM kafka_offset") == 0 ]] || fail "ktally wrote the unrelated server"
note "$TEST_NAME ($KT_MODE): the unrelated server refused $before times while the replica was read-only," \
  "the promoted replica taken (same identity); exact, $((SECONDS - t0)) s"
