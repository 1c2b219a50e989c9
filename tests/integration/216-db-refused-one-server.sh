#!/usr/bin/env bash
# One server of a hosts list refusing the password is that server's
# answer, not the list's (sql/HA.md): a user whose password differs on
# the two servers of a list (the services' MariaDB and a second private
# one) counts on the server that takes it, the refusal said in one line
# (db-skip, reason refused); a running job whose server goes down while
# the next one refuses waits for its server and goes on, exact, never
# exits; every server refusing is still fatal at once (exit 3, one line);
# one refusing and the other down waits out --startup-timeout, then exit
# 3, its last line naming both. Red before: ktally stopped at the first refusal (exit 3,
# "Access denied"), also when the server that refused was the second and
# the job's own was only down: a restart met the same until it came back.
# broker: any — about MariaDB; Kafka is only the source of the lines
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/faults.sh"

mysql_down=no
user=kt9_$RUN_ID
cleanup_users() {
  [[ $mysql_down == no ]] || "$KT_SERVICES" restart-mysql > /dev/null 2>&1 || true
  kt_sql mysql "DROP USER IF EXISTS '$user'@'127.0.0.1'" || true
  kt_other_sql mysql "DROP USER IF EXISTS '$user'@'127.0.0.1'" || true
  kt_cleanup
}
trap cleanup_users EXIT
kt_other_mysql
db=refused_$RUN_ID
pw_own=own-$RUN_ID; pw_other=other-$RUN_ID
kt_sql mysql "CREATE DATABASE $db; CREATE USER '$user'@'127.0.0.1' IDENTIFIED BY '$pw_own';
              GRANT ALL ON $db.* TO '$user'@'127.0.0.1'"
kt_other_sql mysql "CREATE DATABASE $db; CREATE USER '$user'@'127.0.0.1' IDENTIFIED BY '$pw_other';
                    GRANT ALL ON $db.* TO '$user'@'127.0.0.1'"
printf '%s\n' "$pw_own" > "$WORK/pw-own"; printf '%s\n' "$pw_other" > "$WORK/pw-other"
printf 'neither-%s\n' "$RUN_ID" > "$WORK/pw-wrong"; chmod 600 "$WORK"/pw-*
list="mysql://$user@127.0.0.1:$KT_MYSQL_PORT,127.0.0.1:$KT_MYSQL_OTHER_PORT/$db"
topic=$(kt_new_topic refused 2)
kt_gen "$topic" --lines 2000 --seed "$KT_SEED" --truth "$WORK/t1" > "$WORK/gen1"
first=$(sed 's/.*messages=\([0-9]*\).*/\1/' "$WORK/gen1")
other_offsets() { [[ $(kt_other_sql "$db" "SELECT COALESCE(SUM(\`offset\`), 0) FROM kafka_offset" 2>/dev/null) == "$1" ]]; }

# The first server refuses, the second takes it: the job counts there.
rc=0
"$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$list" --db-password-file "$WORK/pw-other" \
  --job other --exit-when-idle --interval 0 --startup-timeout 10s --log-format json 2> "$WORK/other.log" \
  || rc=$?
((rc == 0)) || { cat "$WORK/other.log" >&2; fail "the first server refusing stopped the job (exit $rc)"; }
other_offsets "$first" || fail "the job did not count on the server that took it"
kt_log_match '.event == "db-skip" and .reason == "refused" and .server == "127.0.0.1:'"$KT_MYSQL_PORT"'"' \
  "$WORK/other.log" || { cat "$WORK/other.log" >&2; fail "the refusal was not said (db-skip, reason refused)"; }
! grep -qF -- "$pw_own" "$WORK/other.log" || fail "a password leaked"

# Running on the first; it goes down, the second refuses: the job waits.
"$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$list" --db-password-file "$WORK/pw-own" \
  --job own --interval 0.2 --log-format json 2> "$WORK/own.log" &
pid=$!; KT_CHILDREN+=("$pid")
kt_wait_for 60 kt_offsets_reach "$db" own "$first" || { cat "$WORK/own.log" >&2; fail "the job did not count on its server"; }
"$KT_SERVICES" kill-mysql > /dev/null; mysql_down=yes
kt_gen "$topic" --lines 1000 --seed $((KT_SEED + 1)) --truth "$WORK/t2" > "$WORK/gen2"
second=$(sed 's/.*messages=\([0-9]*\).*/\1/' "$WORK/gen2")
waited() { kt_log_match '.event == "retry" and (.message | contains("Access denied"))' "$WORK/own.log"; }
kt_wait_for 30 waited || { cat "$WORK/own.log" >&2; fail "no retry while the server was down and the other refused"; }
kill -0 "$pid" 2>/dev/null || { cat "$WORK/own.log" >&2; fail "the job ended while its server was down and the other refused"; }
"$KT_SERVICES" restart-mysql > /dev/null; mysql_down=no
kt_wait_for 60 kt_offsets_reach "$db" own $((first + second)) || { cat "$WORK/own.log" >&2; fail "the job did not go on"; }
kill -TERM "$pid"; wait "$pid" || fail "ktally exited $? after SIGTERM"
kt_sum_truths "$WORK/t1" "$WORK/t2" > "$WORK/truth"
kt_check_counts "$db" "$WORK/truth"

# Every server refusing: fatal at once, one line, as with one server.
rc=0; t0=$SECONDS
"$KTALLY" run -q --brokers "$KT_BROKERS" --topic "$topic" --db "$list" --db-password-file "$WORK/pw-wrong" \
  --job wrong --exit-when-idle --startup-timeout 20s 2> "$WORK/wrong.err" || rc=$?
((rc == 3 && SECONDS - t0 <= 8)) && [[ $(wc -l < "$WORK/wrong.err") == 1 ]] \
  && grep -q "no usable MySQL server.*Access denied.*Access denied" "$WORK/wrong.err" \
  || { cat "$WORK/wrong.err" >&2; fail "every server refusing: exit $rc after $((SECONDS - t0)) s"; }
# One refuses, the other is down: that one may come back, so the start-up
# timeout is waited out; then one line naming both.
rc=0; t0=$SECONDS
"$KTALLY" run -q --brokers "$KT_BROKERS" --topic "$topic" \
  --db "mysql://$user@127.0.0.1:$KT_MYSQL_PORT,127.0.0.1:1/$db" --db-password-file "$WORK/pw-other" \
  --job down --exit-when-idle --startup-timeout 3s 2> "$WORK/down.err" || rc=$?
((rc == 3)) \
  && tail -1 "$WORK/down.err" | grep -q "^ktally: MySQL: gave up after 3 s: .*Access denied.*127.0.0.1:1: cannot connect" \
  || { cat "$WORK/down.err" >&2; fail "one refusing, one down: exit $rc after $((SECONDS - t0)) s"; }
note "$TEST_NAME: counted on the server that took the password, waited while its own was down and the other refused, exact; every server refusing: exit 3 at once"
