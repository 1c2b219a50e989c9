#!/usr/bin/env bash
# Settings from the environment (KTALLY_*), the way a container gives them:
# a run given its brokers, topic, database, password file, interval, log
# format and log stream only through KTALLY_ variables counts exactly, over
# a --config file that names other brokers (the environment wins over the
# file) and a flag that names another interval (the flag wins over the
# environment); its records are JSON lines on stdout and nothing is on
# stderr (--log-to stdout); a SIGHUP after the file changed applies the
# file's new max-per-partition but keeps the environment's interval;
# config --check shows what came from the environment; a password in
# KTALLY_DB is refused without --env-secrets and never printed. Red before
# the environment was a source: the run used the file's brokers.
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

db_uri=$(kt_new_db envset); db=$(kt_db_name "$db_uri")
topic=$(kt_new_topic envset 3)
printf '%s\n' "$KT_MYSQL_PASSWORD" > "$WORK/pw"; chmod 600 "$WORK/pw"
cat > "$WORK/ktally.conf" <<CONF
[kafka]
brokers = 127.0.0.1:1
[batch]
interval = 100ms
CONF
export KTALLY_CONFIG=$WORK/ktally.conf KTALLY_BROKERS=$KT_BROKERS KTALLY_TOPIC=$topic
export KTALLY_DB=mysql://$KT_MYSQL_USER@$KT_MYSQL_HOST:$KT_MYSQL_PORT/$db
export KTALLY_DB_PASSWORD_FILE=$WORK/pw KTALLY_INTERVAL=300ms KTALLY_JOB=envjob
export KTALLY_LOG_FORMAT=json KTALLY_LOG_TO=stdout KTALLY_SERVICE_HOST=10.0.0.1

"$KTALLY" config --check > "$WORK/check" || fail "config --check with the environment failed"
grep -qx "brokers = $KT_BROKERS" "$WORK/check" && grep -qx "interval = 0.3" "$WORK/check" \
  && grep -q "^# from the environment .*KTALLY_BROKERS.*KTALLY_INTERVAL" "$WORK/check" \
  && grep -qx "# ignored, no setting of ktally: KTALLY_SERVICE_HOST" "$WORK/check" \
  || { cat "$WORK/check" >&2; fail "config --check does not show the environment's settings"; }

kt_gen "$topic" --lines 3000 --seed 250 --truth "$WORK/truth1" > "$WORK/gen1"
m1=$(sed 's/.*messages=\([0-9]*\).*/\1/' "$WORK/gen1")
"$KTALLY" run --interval 200ms > "$WORK/run.log" 2> "$WORK/run.err" &
pid=$!; KT_CHILDREN+=("$pid")
logged() { kt_log_match "$1" "$WORK/run.log"; }
read_all() { [[ $(kt_log_sum batch records "$WORK/run.log") == "$1" ]]; }
kt_wait_for 20 read_all "$m1" || { cat "$WORK/run.log" "$WORK/run.err" >&2; fail "not all read"; }
kt_check_counts "$db" "$WORK/truth1"
logged '.event == "start" or .event == "batch"' || fail "no JSON records on stdout"

# The file's new interval does not apply (the environment gives it), its
# new max-per-partition does.
printf '[kafka]\nbrokers = 127.0.0.1:1\n[batch]\ninterval = 5s\nmax-per-partition = 7\n' \
  > "$WORK/ktally.conf"
kill -HUP "$pid"
kt_wait_for 10 logged '.event == "reload" and (.message | contains("--max-per-partition 100000 -> 7"))' \
  || { cat "$WORK/run.log" >&2; fail "the reload did not apply the file's max-per-partition"; }
! logged '.event == "reload" and (.message | contains("--interval"))' \
  || fail "the reload changed the interval the environment and the flag give"
kt_gen "$topic" --lines 300 --seed 251 --truth "$WORK/truth2" > "$WORK/gen2"
m2=$(sed 's/.*messages=\([0-9]*\).*/\1/' "$WORK/gen2")
kt_sum_truths "$WORK/truth1" "$WORK/truth2" > "$WORK/truth"
kt_wait_for 20 read_all $((m1 + m2)) || { cat "$WORK/run.log" >&2; fail "not all read after the reload"; }
kt_check_counts "$db" "$WORK/truth"
# 300 lines over 3 partitions in batches of at most 7 offsets a partition.
sed -n '/"event":"reload"/,$p' "$WORK/run.log" > "$WORK/after"
! kt_log_match '.event == "batch" and .records > 21' "$WORK/after" \
  || fail "a batch after the reload read more than --max-per-partition 7 allows"
kt_stop "$pid" || fail "SIGTERM: exit $?"
[[ ! -s $WORK/run.err ]] || { cat "$WORK/run.err" >&2; fail "--log-to stdout: something on stderr"; }
while read -r line; do
  jq -e . <<< "$line" > /dev/null 2>&1 || fail "a line on stdout is no JSON record: $line"
done < "$WORK/run.log"

# A password in KTALLY_DB: refused, never shown; with --env-secrets, taken.
rc=0
KTALLY_DB=$db_uri KTALLY_DB_PASSWORD_FILE= "$KTALLY" run --exit-when-idle \
  > "$WORK/secret.out" 2>&1 || rc=$?
[[ $rc == 2 ]] && grep -q "^ktally: KTALLY_DB: holds a secret.*--env-secrets" "$WORK/secret.out" \
  || { cat "$WORK/secret.out" >&2; fail "a password in KTALLY_DB: exit $rc"; }
! grep -q -- "$KT_MYSQL_PASSWORD" "$WORK/secret.out" || fail "the password shows"
KTALLY_DB=$db_uri KTALLY_DB_PASSWORD_FILE= "$KTALLY" run --exit-when-idle --env-secrets \
  --interval 0 > "$WORK/secret.out" 2>&1 || { cat "$WORK/secret.out" >&2; fail "--env-secrets refused"; }
kt_check_counts "$db" "$WORK/truth"

# stdout stays command output elsewhere: status takes no --log-to (and
# leaves KTALLY_LOG_TO, not its setting, alone).
rc=0; "$KTALLY" status --log-to stdout > "$WORK/status.out" 2>&1 || rc=$?
[[ $rc == 2 ]] || { cat "$WORK/status.out" >&2; fail "status --log-to: exit $rc, expected 2"; }
"$KTALLY" status > "$WORK/status.out" 2> "$WORK/status.err" \
  || { cat "$WORK/status.err" >&2; fail "status with KTALLY_LOG_TO set failed"; }
grep -q "envjob" "$WORK/status.out" || fail "status printed no job: $(cat "$WORK/status.out")"

note "$TEST_NAME: settings from KTALLY_ variables, flag > environment > file, reload kept the order, logs on stdout"
