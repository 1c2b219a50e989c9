#!/usr/bin/env bash
# Which server is this, for a process that has not yet seen its database?
# A hosts list that names the job's server and an unrelated one holding
# an empty database of the same name; the job's server goes down and a
# supervisor starts ktally again during the outage. Nothing tells that
# namesake from a promoted replica that lost the database (230 needs the
# job to start anew there), so the new process creates its tables there
# and counts the topic from the start (sql/HA.md, "What it cannot tell"),
# but it says so, once, in a warning that names the server and tells the
# operator what to do (db-identity). Red before: no warning at all (the
# identity was made during the migration, after the check that warns).
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
warned() { kt_log_count_if '.event == "db-identity" and .level == "warning" and (.message | contains("finds no ktally database there"))' "$WORK/run2.log"; }
said() { (($(warned) >= 1)); }
kt_wait_for 30 said || { cat "$WORK/run2.log" >&2; fail "the second process took the other server without the db-identity warning"; }
"$KT_SERVICES" restart-mysql > /dev/null; mysql_down=no
total=$(( $(kt_gen_messages "$WORK/gen1") + $(kt_gen_messages "$WORK/gen2") ))
other_reach() { [[ $(kt_other_sql "$db" "SELECT COALESCE(SUM(\`offset\`), 0) FROM kafka_offset" 2>/dev/null) == "$total" ]]; }
kt_wait_for 60 other_reach || { cat "$WORK/run2.log" >&2; fail "the second process did not count the topic on the server it took"; }
kill -TERM "$pid"; wait "$pid" || fail "ktally exited $? after SIGTERM"
[[ $(warned) == 1 ]] || fail "the warning was said $(warned) times, not once"

# Each database exact for itself: the own one holds the first run's
# counts, the other the whole topic (the split the warning names).
kt_sum_truths "$WORK/t1" > "$WORK/truth1"
kt_check_counts "$db" "$WORK/truth1"
kt_sum_truths "$WORK/t1" "$WORK/t2" > "$WORK/truth"
kt_other_sql "$db" "SELECT log_time, log_count FROM error_log ORDER BY log_time" > "$WORK/other-counts"
diff -q "$WORK/other-counts" "$WORK/truth" > /dev/null \
  || { diff "$WORK/other-counts" "$WORK/truth" | head -5 >&2; fail "the other server's counts are not the whole topic's"; }
note "$TEST_NAME: the restarted process took the namesake with one db-identity warning; each database exact for itself"
