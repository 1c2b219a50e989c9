#!/usr/bin/env bash
# Which server is this, for a process that has not yet seen its database?
# A hosts list that names the job's server and an unrelated one holding
# an empty database of the same name; the job's server goes down and a
# supervisor starts ktally again during the outage. The new process must
# not create a database on the second server: it waits (db-skip, reason
# another-database, in one line naming the rule), writes nothing there,
# and goes on in its own database, exact, once that server is back. Red
# before: the second process created its tables on the other server and
# counted the whole topic there again, without the db-identity warning
# (the identity was made during the migration, after the check that
# warns).
# broker: any — about MariaDB; Kafka is only the source of the lines
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/faults.sh"

mysql_down=no
trap '[[ $mysql_down == no ]] || "$KT_SERVICES" restart-mysql > /dev/null 2>&1; kt_cleanup' EXIT
kt_other_mysql
db_uri=$(kt_new_db outage); db=$(kt_db_name "$db_uri")
kt_other_sql mysql "DROP DATABASE IF EXISTS $db; CREATE DATABASE $db"
creds="$KT_MYSQL_USER:$KT_MYSQL_PASSWORD"
list="mysql://$creds@127.0.0.1:$KT_MYSQL_PORT,127.0.0.1:$KT_MYSQL_OTHER_PORT/$db"

topic=$(kt_new_topic outage 2)
kt_gen "$topic" --lines 1000 --seed "$KT_SEED" --truth "$WORK/t1" > "$WORK/gen1"
"$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$list" --exit-when-idle \
  --log-format json 2> "$WORK/run1.log" || { cat "$WORK/run1.log" >&2; fail "the first run failed"; }

# Its server down; the supervisor's restart.
"$KT_SERVICES" kill-mysql > /dev/null; mysql_down=yes
kt_gen "$topic" --lines 1000 --seed $((KT_SEED + 1)) --truth "$WORK/t2" > "$WORK/gen2"
"$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$list" --interval 0.2 \
  --log-format json 2> "$WORK/run2.log" &
pid=$!; KT_CHILDREN+=("$pid")
waiting() { kt_log_count_if '.event == "db-skip" and .reason == "another-database" and (.message | contains("an earlier server of the list"))' "$WORK/run2.log"; }
waited() { (($(waiting) >= 1)); }
kt_wait_for 30 waited || { cat "$WORK/run2.log" >&2; fail "the second process did not refuse the other server while its own was down"; }
[[ $(kt_other_sql "$db" "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = '$db'") == 0 ]] \
  || fail "the second process created tables on the other server"
"$KT_SERVICES" restart-mysql > /dev/null; mysql_down=no
total=$(( $(kt_gen_messages "$WORK/gen1") + $(kt_gen_messages "$WORK/gen2") ))
kt_wait_for 60 kt_offsets_reach "$db" "$topic" "$total" \
  || { cat "$WORK/run2.log" >&2; fail "the job did not go on once its server was back"; }
kill -TERM "$pid"; wait "$pid" || fail "ktally exited $? after SIGTERM"

kt_sum_truths "$WORK/t1" "$WORK/t2" > "$WORK/truth"
kt_check_counts "$db" "$WORK/truth"
[[ $(kt_other_sql "$db" "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = '$db'") == 0 ]] \
  || fail "tables were created on the other server"
note "$TEST_NAME: the restarted process waited for its own server ($(waiting) refusals of the other), nothing created there; exact"
