#!/usr/bin/env bash
# Reload and password rotation (#16). A job runs as its own MySQL user,
# its password in a file, its settings in a config file:
#  1. SIGHUP after ALTER USER and a new password file: "the MySQL password
#     changed", and the next connection (its old one killed) uses it at once;
#  2. no SIGHUP: ALTER USER, a new file, the connection killed: the
#     reconnect is refused, reads the file again, and goes on with it;
#  3. SIGHUP with a new --interval and --max-per-partition: applied, a
#     changed topic logged as needing a restart, a broken file ignored; the
#     process never ends (it was exit 129);
#  4. the counts are exact, the audit passes; then a rotation the file does
#     not follow ends the job (exit 3), saying the file holds the same one.
# The reload records say what changed as data, for machines: "applied" and
# "needs_restart" are arrays of {setting, section, from, to, secret}, a
# secret's values never in them (red before: free text only).
# And SIGHUP never ends ktally while it waits at start-up, nor `status`.
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

db_uri=$(kt_new_db rotation); db=$(kt_db_name "$db_uri")
topic=$(kt_new_topic rotation 3)
user=kt_rot_$RUN_ID
kt_sql mysql "DROP USER IF EXISTS '$user'@'%'; CREATE USER '$user'@'%' IDENTIFIED BY 'one$RUN_ID';
  GRANT ALL ON \`$db\`.* TO '$user'@'%'"
trap 'kt_sql mysql "DROP USER IF EXISTS '"'$user'"'@'"'%'"'" 2> /dev/null; kt_cleanup' EXIT
umask 077
printf 'one%s\n' "$RUN_ID" > "$WORK/pw"
cat > "$WORK/ktally.conf" <<CONF
[kafka]
brokers = $KT_BROKERS
topic = $topic
[mysql]
host = $KT_MYSQL_HOST
port = $KT_MYSQL_PORT
user = $user
database = $db
password-file = $WORK/pw
[batch]
interval = 200ms
[log]
log-format = json
CONF

# The services' MYSQL_PWD would be this user's password otherwise.
env -u MYSQL_PWD "$KTALLY" run --config "$WORK/ktally.conf" 2> "$WORK/run.log" &
pid=$!; KT_CHILDREN+=("$pid")

produced=0
produce() {  # produce N SEED START: N lines, the truth in $WORK/truth.SEED
  kt_gen "$topic" --lines "$1" --seed "$2" --start "$3" --truth "$WORK/truth.$2" > /dev/null
  produced=$((produced + $1))
}
caught_up() { [[ $(kt_offset_sum "$db" "$topic" 2> /dev/null) == "$produced" ]]; }
alive() { kill -0 "$pid" 2> /dev/null || { cat "$WORK/run.log" >&2; fail "ktally ended: $1"; }; }
logged() { kt_log_match "$1" "$WORK/run.log"; }  # logged JQ-CONDITION
kill_connections() {  # ktally's sessions, from the server's side
  local id
  for id in $(kt_sql mysql "SELECT id FROM information_schema.processlist WHERE user = '$user'"); do
    kt_sql mysql "KILL $id" 2> /dev/null || true
  done
}
rotate() {  # rotate PASSWORD [FILE-TOO]
  kt_sql mysql "ALTER USER '$user'@'%' IDENTIFIED BY '$1'"
  [[ ${2:-yes} == no ]] || printf '%s\n' "$1" > "$WORK/pw"
}

produce 3000 1 "2017-07-30 14:00:00"
kt_wait_for 20 caught_up || { cat "$WORK/run.log" >&2; fail "the first lines were not counted"; }

# 1. With SIGHUP: the password is taken before any connection needs it.
rotate "two$RUN_ID"
kill -HUP "$pid"
kt_wait_for 10 logged '.event == "reload" and (.message | contains("the MySQL password changed"))
                       and (.applied | any(.setting == "password" and .secret and .from == null and .to == null))' \
  || { cat "$WORK/run.log" >&2; fail "SIGHUP did not read the new password"; }
logged '.event == "signal" and .signal == "SIGHUP"' || fail "the SIGHUP itself was not logged"
kill_connections
produce 2000 2 "2017-07-31 14:00:00"
kt_wait_for 20 caught_up || { cat "$WORK/run.log" >&2; fail "no batch after the SIGHUP rotation"; }
alive "after the SIGHUP rotation"
if logged '.event == "password-reread"'; then fail "the reloaded password was not used at once"; fi

# 2. Without SIGHUP: refused once, the file read again, on with it.
rotate "three$RUN_ID"
kill_connections
produce 2000 3 "2017-08-01 14:00:00"
kt_wait_for 30 caught_up || { cat "$WORK/run.log" >&2; fail "no batch after a rotation without SIGHUP"; }
alive "after a rotation without SIGHUP"
logged '.event == "password-reread" and .file == "'"$WORK/pw"'"' \
  || fail "the reconnect did not say it read the password file again"

# 3. SIGHUP with new limits, a topic that needs a restart, a broken file.
sed -i 's/^interval = .*/interval = 100ms\nmax-per-partition = 50/' "$WORK/ktally.conf"
kill -HUP "$pid"
# (It also says the password changed: the one step 2 read is not the
# last reload's.)
applied='.event == "reload" and (.message | contains("reload: --interval 0.2 s -> 0.1 s; --max-per-partition 100000 -> 50"))
         and (.applied | map(select(.secret | not) | [.setting, .section, .from, .to])
              == [["interval", "batch", "0.2", "0.1"], ["max-per-partition", "batch", "100000", "50"]])'
kt_wait_for 10 logged "$applied" || { cat "$WORK/run.log" >&2; fail "--interval and --max-per-partition not reloaded"; }
produce 600 4 "2017-08-02 14:00:00"
kt_wait_for 20 caught_up || fail "no batch after the reload of the limits"
# 600 lines over 3 partitions: after the reload, no batch reads more than
# 50 a partition (150 in all), and there were several of them.
# A batch's line follows its COMMIT (the offsets caught_up reads): wait
# for the lines, not only for the offsets.
sizes() {
  jq -Rn "[inputs | fromjson? | objects] | (map($applied) | index(true)) as \$i
    | .[\$i:][] | select(.event == \"batch\") | .records" "$WORK/run.log" > "$WORK/sizes"
  [[ $(awk '{ s += $1 } END { print s + 0 }' "$WORK/sizes") -ge 600 ]]
}
kt_wait_for 10 sizes || true
[[ $(wc -l < "$WORK/sizes") -ge 4 ]] && ! awk '$1 > 150 { bad = 1 } END { exit !bad }' "$WORK/sizes" \
  || fail "--max-per-partition 50 not applied: batches of $(tr '\n' ' ' < "$WORK/sizes")"
sed -i "s/^topic = .*/topic = other_$RUN_ID/" "$WORK/ktally.conf"
kill -HUP "$pid"
kt_wait_for 10 logged '.event == "reload" and (.message | contains("[kafka] topic: '"'$topic' -> 'other_$RUN_ID' needs a restart; still '$topic'"'"))
                       and (.needs_restart | index([{"setting": "topic", "section": "kafka", "from": "'"$topic"'", "to": "other_'"$RUN_ID"'", "secret": false}]) != null)' \
  || { cat "$WORK/run.log" >&2; fail "a topic change was not logged as needing a restart"; }
echo "no equals sign" >> "$WORK/ktally.conf"
kill -HUP "$pid"
kt_wait_for 10 logged '.event == "reload" and .level == "warning" and (.error | contains("ktally.conf"))' \
  || { cat "$WORK/run.log" >&2; fail "a broken file was not reported"; }
for _ in 1 2 3 4 5; do kill -HUP "$pid"; done
sleep 0.3  # let the signals land: nothing to wait for but their absence of effect
alive "after SIGHUPs"

# 4. Exact, audited; then a rotation the file does not follow.
kt_sum_truths "$WORK"/truth.* > "$WORK/truth"
kt_check_counts "$db" "$WORK/truth"
kt_audit "$db_uri"
rotate "four$RUN_ID" no
kill_connections
produce 300 5 "2017-08-03 14:00:00"
rc=0
for ((i = 0; i < 200; i++)); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
wait "$pid" || rc=$?
[[ $rc == 3 ]] || { cat "$WORK/run.log" >&2; fail "a password the file does not hold: exit $rc, not 3"; }
logged '.event == "exit" and .exit_status == 3 and (.message | test("Access denied.*\\(read again, .* holds the same password\\)"))' \
  || fail "the refusal does not say the file holds the same password"

# A replay takes SIGHUPs between its batches: it reloads, ends with 0,
# and counts exactly what the job counted.
until=$(kt_sql "$db" "SELECT GROUP_CONCAT(CONCAT(\`partition\`, ':', \`offset\`)) FROM kafka_offset")
from=$(sed 's/:[0-9]*/:0/g' <<< "$until")
"$KTALLY" replay --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --from "$from" \
  --until "$until" --table rp --max-per-partition 40 --log-format json 2> "$WORK/replay.log" &
rpid=$!; KT_CHILDREN+=("$rpid")
hup_caught() { (( 0x$(awk '/^SigCgt:/ { print $2 }' "/proc/$rpid/status" 2> /dev/null || echo 0) & 1 )); }
kt_wait_for 10 hup_caught || fail "replay never caught SIGHUP"
kill -HUP "$rpid"; kill -HUP "$rpid"
rc=0; wait "$rpid" || rc=$?
[[ $rc == 0 ]] || { cat "$WORK/replay.log" >&2; fail "replay after SIGHUP: exit $rc, not 0"; }
kt_log_match '.event == "reload" and .applied == [] and .message == "job \(.job): reload: nothing changed"' "$WORK/replay.log" \
  || { cat "$WORK/replay.log" >&2; fail "the replay did not reload"; }
kt_check_counts "$db" "$WORK/truth" rp

# SIGHUP while waiting at start-up (MySQL unreachable), and to `status`.
dead=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --startup-timeout 30 \
  --db "mysql://kt@127.0.0.1:$dead/$db" 2> "$WORK/wait.log" &
wpid=$!; KT_CHILDREN+=("$wpid")
"$KTALLY" status --brokers "127.0.0.1:$dead" --topic "$topic" --db "$db_uri" --startup-timeout 2 \
  > /dev/null 2> "$WORK/status.log" &
spid=$!
sleep 0.5
kill -HUP "$wpid" "$spid"
sleep 0.3
kill -0 "$wpid" 2> /dev/null || fail "SIGHUP ended ktally while it waited for MySQL"
kt_stop "$wpid" || fail "run did not end with 0 at SIGTERM after a SIGHUP"
rc=0; wait "$spid" || rc=$?
[[ $rc == 3 ]] || fail "status after a SIGHUP: exit $rc (129: killed by it), not 3"
note "$TEST_NAME: $produced lines exact through a rotation with SIGHUP and one without; limits reloaded; SIGHUP never fatal"
