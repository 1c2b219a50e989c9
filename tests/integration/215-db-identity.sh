#!/usr/bin/env bash
# Which server is this? A hosts list that names the job's server and an
# unrelated one (a second private MariaDB holding a ktally database of the
# same name, its own identity): while the job's server is down, the other
# is refused in one line naming both identities, again at every retry,
# and nothing is written there; once its own server is back the job goes
# on, exact, and audit passes. The identity is made with the schema, one
# row, and `config --check --connect` names it. Red before: the job took
# the other server as new after one info line, created its tables there
# and counted the whole topic again (issue 31's reproduction: each server
# exact for itself, the topic split between them).
# broker: any — about MariaDB; Kafka is only the source of the lines
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/faults.sh"

mysql_down=no
trap '[[ $mysql_down == no ]] || "$KT_SERVICES" restart-mysql > /dev/null 2>&1; kt_cleanup' EXIT
kt_other_mysql
db_uri=$(kt_new_db ident); db=$(kt_db_name "$db_uri")
kt_other_ktally_db "$db"
creds="$KT_MYSQL_USER:$KT_MYSQL_PASSWORD"
list="mysql://$creds@127.0.0.1:$KT_MYSQL_PORT,127.0.0.1:$KT_MYSQL_OTHER_PORT/$db"

topic=$(kt_new_topic ident 2)
kt_gen "$topic" --lines 3000 --seed "$KT_SEED" --truth "$WORK/t1" > "$WORK/gen1"
first=$(sed 's/.*messages=\([0-9]*\).*/\1/' "$WORK/gen1")
"$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$list" --interval 0.2 \
  --log-format json 2> "$WORK/run.log" &
pid=$!; KT_CHILDREN+=("$pid")
kt_wait_for 60 kt_offsets_reach "$db" "$topic" "$first" || { cat "$WORK/run.log" >&2; fail "the job did not count the first lines"; }
own_id=$(kt_sql "$db" "SELECT id FROM ktally_database")
[[ $own_id =~ ^[0-9a-f-]{36}$ && $own_id != "$other_id" ]] || fail "identities: own '$own_id', other '$other_id'"
[[ $(kt_sql "$db" "SELECT COUNT(*) FROM ktally_database") == 1 ]] || fail "more than one identity row"

# Its own server down: the other is refused, naming both, and written nothing.
"$KT_SERVICES" kill-mysql > /dev/null; mysql_down=yes
kt_gen "$topic" --lines 2000 --seed $((KT_SEED + 1)) --truth "$WORK/t2" > "$WORK/gen2"
second=$(sed 's/.*messages=\([0-9]*\).*/\1/' "$WORK/gen2")
refusals() { kt_log_count_if '.event == "db-skip" and .reason == "another-database"' "$WORK/run.log"; }
two_refusals() { (($(refusals) >= 2)); }
kt_wait_for 30 two_refusals || { cat "$WORK/run.log" >&2; fail "the other server was not refused twice while the job's was down"; }
kt_log_match '.event == "db-skip" and .reason == "another-database" and (.message | contains("'"$other_id"'") and contains("'"$own_id"'"))' \
  "$WORK/run.log" || { grep another-database "$WORK/run.log" | head -1 >&2; fail "the refusal does not name both identities"; }
"$KT_SERVICES" restart-mysql > /dev/null; mysql_down=no
kt_wait_for 60 kt_offsets_reach "$db" "$topic" $((first + second)) \
  || { cat "$WORK/run.log" >&2; fail "the job did not go on once its server was back"; }
kill -TERM "$pid"; wait "$pid" || fail "ktally exited $? after SIGTERM"

kt_sum_truths "$WORK/t1" "$WORK/t2" > "$WORK/truth"
kt_check_counts "$db" "$WORK/truth"
kt_audit "$db_uri"
for table in kafka_offset ktally_batches ktally_job error_log; do
  [[ $(kt_other_sql "$db" "SELECT COUNT(*) FROM $table") == 0 ]] || fail "the job wrote $table on the other server"
done

# The identity, as `config --check --connect` reports it.
"$KTALLY" config --check --connect --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" \
  > "$WORK/check" 2>&1 || { cat "$WORK/check" >&2; fail "config --check --connect failed"; }
grep -q "database identity $own_id" "$WORK/check" || { cat "$WORK/check" >&2; fail "config --connect does not name the identity"; }
note "$TEST_NAME: the other server refused $(refusals) times while the job's was down, nothing written there; exact, audit clean"
