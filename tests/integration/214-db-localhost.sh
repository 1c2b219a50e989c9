#!/usr/bin/env bash
# --db reaches the server the URI names, and the log says how: localhost
# with a port is TCP to that port (exact run, the start line "over
# TCP/IP"); localhost:1,localhost:PORT is two servers (the first refused
# by the kernel, the second used); localhost without a port is the client
# library's default socket, named as that socket (MYSQL_UNIX_PORT points
# it at the services' one here), "over UNIX socket". Red before: the
# library took "localhost" for its default socket whatever the port
# (/run/mysqld/mysqld.sock: "Can't connect to local server"), so both
# servers of the list were that socket, and the messages named a
# localhost:PORT never used.
# broker: any — about MariaDB; Kafka is only the source of the lines
source "$(dirname "$0")/lib.sh"

db_uri=$(kt_new_db localhost); db=$(kt_db_name "$db_uri")
topic=$(kt_new_topic localhost 2)
kt_gen "$topic" --lines 3000 --seed "$KT_SEED" --truth "$WORK/truth" > /dev/null
user_pw="$KT_MYSQL_USER:$KT_MYSQL_PASSWORD"
# Never the default socket by accident: the services' is elsewhere.
[[ $KT_MYSQL_SOCKET != /run/mysqld/mysqld.sock ]] || fail "the services' socket is the default one: nothing to tell apart"

"$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "mysql://$user_pw@localhost:$KT_MYSQL_PORT/$db" \
  --exit-when-idle --interval 0 --startup-timeout 5s --log-format json 2> "$WORK/tcp.log" \
  || { cat "$WORK/tcp.log" >&2; fail "localhost:$KT_MYSQL_PORT: the run failed"; }
kt_check_counts "$db" "$WORK/truth"
kt_log_match '.event == "start" and .transport == "TCP/IP" and (.database | test("@localhost:'"$KT_MYSQL_PORT"'/"))' \
  "$WORK/tcp.log" || { cat "$WORK/tcp.log" >&2; fail "the start line does not say localhost:$KT_MYSQL_PORT over TCP/IP"; }

# Two ports of localhost: two servers, tried in order.
"$KTALLY" jobs --startup-timeout 5s --db "mysql://$user_pw@localhost:1,localhost:$KT_MYSQL_PORT/$db" \
  > "$WORK/jobs.out" 2> "$WORK/jobs.err" || { cat "$WORK/jobs.err" >&2; fail "localhost:1,localhost:$KT_MYSQL_PORT: jobs failed"; }
grep -q "localhost:1/$db: Can't connect to server on 'localhost'" "$WORK/jobs.err" \
  || { cat "$WORK/jobs.err" >&2; fail "the first server of the list was not tried over TCP"; }
grep -q "$topic" "$WORK/jobs.out" || { cat "$WORK/jobs.out" >&2; fail "jobs did not list the job"; }

# localhost alone: the default socket, named as such.
MYSQL_UNIX_PORT=$KT_MYSQL_SOCKET "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" \
  --db "mysql://$user_pw@localhost/$db" --exit-when-idle --interval 0 --startup-timeout 5s \
  --log-format json 2> "$WORK/socket.log" || { cat "$WORK/socket.log" >&2; fail "localhost (socket): the run failed"; }
kt_log_match '.event == "start" and .transport == "UNIX socket" and (.database | contains("@'"$KT_MYSQL_SOCKET"'/"))' \
  "$WORK/socket.log" || { cat "$WORK/socket.log" >&2; fail "the start line does not name the socket used"; }
kt_check_counts "$db" "$WORK/truth"
note "$TEST_NAME: localhost:PORT over TCP/IP exact, localhost:1,localhost:PORT two servers, localhost alone the default socket"
