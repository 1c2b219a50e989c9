#!/usr/bin/env bash
# `config --check --connect` (#16), like `vector validate`: reaches each
# topic and the database, reads the grants ktally needs, and still prints
# a config file that reads back (its findings are comments). A dead
# broker is named with its address and the cause ("Connection refused"),
# as kcat says it, not only "Broker transport failure"; missing grants
# are listed, and a "CREATE command denied" at start-up carries the
# grants ktally needs.
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

db_uri=$(kt_new_db connect); db=$(kt_db_name "$db_uri")
topic=$(kt_new_topic connect 3)
user=kt_lim_$RUN_ID

# 1. Everything reachable, every grant held (the services' user has ALL).
"$KTALLY" config --check --connect --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" \
  > "$WORK/out" 2> "$WORK/err" || { cat "$WORK/err" >&2; fail "config --check --connect failed"; }
grep -q "^# --connect: Kafka .*: topic $topic: 3 partitions$" "$WORK/out" || fail "no Kafka line: $(cat "$WORK/out")"
grep -q "^# --connect: MySQL .*/$db: connected" "$WORK/out" || fail "no MySQL line"
grep -q "^# --connect: MySQL grants on $db: SELECT, INSERT, UPDATE, DELETE, CREATE, ALTER, DROP, CREATE VIEW, CREATE TEMPORARY TABLES$" "$WORK/out" \
  || fail "no grants line: $(cat "$WORK/out")"
# ...and what it printed is a config file (the password is not in it:
# MYSQL_PWD gives it, as to the command above).
"$KTALLY" config --check --config "$WORK/out" > "$WORK/again" 2> "$WORK/err" \
  || { cat "$WORK/err" >&2; fail "the output of --connect does not read back"; }
diff <(grep -v '^#' "$WORK/out") <(grep -v '^#' "$WORK/again") > /dev/null || fail "it reads back otherwise"
kt_sql "$db" "SHOW TABLES" > "$WORK/tables"
[[ ! -s $WORK/tables ]] || fail "config --check --connect created tables: $(cat "$WORK/tables")"

# 2. A dead broker: its address and why, in one line, exit 3.
dead=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
for cmd in "config --check --connect" run; do
  rc=0
  # shellcheck disable=SC2086
  "$KTALLY" $cmd --brokers "127.0.0.1:$dead" --topic "$topic" --db "$db_uri" --startup-timeout 1 \
    > /dev/null 2> "$WORK/err" || rc=$?
  [[ $rc == 3 && $(wc -l < "$WORK/err") == 1 ]] || { cat "$WORK/err" >&2; fail "$cmd, dead broker: exit $rc"; }
  grep -q "127.0.0.1:$dead.*Connection refused" "$WORK/err" || fail "$cmd: the dead broker is not named with its cause: $(cat "$WORK/err")"
done

# 3. A user with SELECT and INSERT only: the missing grants, listed; and
# the first CREATE at start-up names them all.
kt_sql mysql "DROP USER IF EXISTS '$user'@'%'; CREATE USER '$user'@'%' IDENTIFIED BY 'pw$RUN_ID';
  GRANT SELECT, INSERT ON \`$db\`.* TO '$user'@'%'"
lim_uri="mysql://$user@$KT_MYSQL_HOST:$KT_MYSQL_PORT/$db"
rc=0
MYSQL_PWD=pw$RUN_ID "$KTALLY" config --check --connect --brokers "$KT_BROKERS" --topic "$topic" \
  --db "$lim_uri" > "$WORK/out" 2> "$WORK/err" || rc=$?
[[ $rc == 3 && $(wc -l < "$WORK/err") == 1 ]] || { cat "$WORK/err" >&2; fail "missing grants: exit $rc"; }
grep -q "lacks UPDATE, DELETE, CREATE, ALTER, DROP, CREATE VIEW, CREATE TEMPORARY TABLES on database $db" "$WORK/err" \
  || fail "the missing grants are not listed: $(cat "$WORK/err")"
grep -q "^# --connect: MySQL .*: connected" "$WORK/out" || fail "the connection itself was fine"
rc=0
MYSQL_PWD=pw$RUN_ID "$KTALLY" init-db --db "$lim_uri" 2> "$WORK/err" || rc=$?
[[ $rc == 3 ]] || { cat "$WORK/err" >&2; fail "init-db without CREATE: exit $rc"; }
grep -q "CREATE command denied.*ktally needs GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, ALTER, DROP, CREATE VIEW, CREATE TEMPORARY TABLES ON its database" "$WORK/err" \
  || fail "no hint with CREATE command denied: $(cat "$WORK/err")"
kt_sql mysql "DROP USER '$user'@'%'"

# 4. An unknown database: exit 3, named.
rc=0
"$KTALLY" config --check --connect --brokers "$KT_BROKERS" --topic "$topic" \
  --db "$KT_DB_URI_BASE/nosuch_$RUN_ID" > /dev/null 2> "$WORK/err" || rc=$?
[[ $rc == 3 ]] && grep -q "nosuch_$RUN_ID" "$WORK/err" || { cat "$WORK/err" >&2; fail "unknown database: exit $rc"; }
note "$TEST_NAME: --connect found topic and grants, output reads back; dead broker named with its cause; missing grants listed and hinted"
