#!/usr/bin/env bash
# --group: a partition revoked while a batch of it commits must not be
# written after the revocation (src/README.md, "Two batches at once":
# "a revoked partition's records are never written"). With the pipeline,
# the scheduler goes on serving the consumer (rest(), the next read)
# while the committer's thread still writes batch N; a rebalance served
# then gives the partitions away at once (streams_apply,
# rd_kafka_assign/incremental_unassign) and N commits them afterwards.
# Before the pipeline the commit was synchronous: no rebalance could be
# served while it ran. Counts stay exact (the fence, and the new owner is
# fenced off), but the rule is broken and the new owner's first batch is
# wasted.
#
# How: member A commits the backlog; a session then holds A's
# kafka_offset rows FOR UPDATE, more records come, A plans and reads a
# batch and its commit blocks on the rows; member B joins (A is in its
# --interval rest, serving the group); once A logged "group: revoked"
# (or 20 s passed) the session is killed, and A's batch commits. Red when
# a batch planned before A's revocation is logged committed after it.
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"
kt_gen_messages() { sed -n 's/.*messages=\([0-9]*\).*/\1/p' "$@" | awk '{ s += $1 } END { print s + 0 }'; }

db_uri=$(kt_new_db prevoke); db=$(kt_db_name "$db_uri")
topic=$(kt_new_topic prevoke 2)
group=g_$RUN_ID
fast=(-X session.timeout.ms=6000 -X heartbeat.interval.ms=500)
member() {
  "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --group "$group" \
    --interval 10 "${fast[@]}" --log-format json 2>> "$WORK/member$1.log" &
  pids[$1]=$!; KT_CHILDREN+=($!)
}
declare -a pids=()
kt_gen "$topic" --lines 400 --seed 41 --truth "$WORK/t1" > "$WORK/gen1"
first=$(kt_gen_messages "$WORK/gen1")
member 0
kt_wait_for 40 bash -c "[[ \$(mariadb -h '$KT_MYSQL_HOST' -P '$KT_MYSQL_PORT' -u '$KT_MYSQL_USER' -p'$KT_MYSQL_PASSWORD' -N -B '$db' -e \"SELECT COALESCE(SUM(\\\`offset\\\`),0) FROM kafka_offset\" 2>/dev/null) == $first ]]" \
  || { cat "$WORK/member0.log" >&2; fail "member A did not commit the first backlog"; }

# The session that holds A's offset rows.
kt_sql "$db" "START TRANSACTION; SELECT COUNT(*) FROM kafka_offset FOR UPDATE; SELECT SLEEP(60); COMMIT" \
  > /dev/null 2>&1 &
KT_CHILDREN+=($!)
kt_wait_for 10 bash -c "[[ \$(mariadb -h '$KT_MYSQL_HOST' -P '$KT_MYSQL_PORT' -u '$KT_MYSQL_USER' -p'$KT_MYSQL_PASSWORD' -N -B '$db' -e \"SELECT COUNT(*) FROM information_schema.processlist WHERE info LIKE 'SELECT SLEEP(60)%'\") == 1 ]]" \
  || fail "the locking session did not start"
kt_gen "$topic" --lines 400 --seed 42 --truth "$WORK/t2" > "$WORK/gen2"
# A's next batch (within its 10 s interval) blocks on the rows.
waiting() { [[ $(kt_sql "$db" "SELECT COUNT(*) FROM information_schema.innodb_trx WHERE trx_state = 'LOCK WAIT'") -ge 1 ]]; }
kt_wait_for 20 waiting || fail "member A's commit never waited on the locked rows"
member 1
revoked=yes
kt_wait_for 20 grep -q "group: revoked" "$WORK/member0.log" || revoked=no
locker=$(kt_sql "$db" "SELECT id FROM information_schema.processlist WHERE info LIKE 'SELECT SLEEP(60)%'")
[[ -n $locker ]] && kt_sql "$db" "KILL $locker" || true
messages=$((first + $(kt_gen_messages "$WORK/gen2")))
kt_wait_for 60 bash -c "[[ \$(mariadb -h '$KT_MYSQL_HOST' -P '$KT_MYSQL_PORT' -u '$KT_MYSQL_USER' -p'$KT_MYSQL_PASSWORD' -N -B '$db' -e \"SELECT COALESCE(SUM(\\\`offset\\\`),0) FROM kafka_offset\") == $messages ]]" \
  || fail "the group did not reach the high watermarks"
kt_stop "${pids[0]}" || fail "member A: exit on SIGTERM"
kt_stop "${pids[1]}" || fail "member B: exit on SIGTERM"
kt_check_counts "$db" <(kt_sum_truths "$WORK/t1" "$WORK/t2")

# A batch of A planned (its event's time less its duration) before A's
# first revocation whose COMMIT returned after it (its plan, read, wait
# and commit added to its start). A batch lands, and is logged, after
# the revocation it held up: its log line's time alone says nothing.
offender=$(python3 - "$WORK/member0.log" <<'PY'
import json, sys, datetime
def t(s): return datetime.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()
revoked_at = None
for line in open(sys.argv[1]):
    try: r = json.loads(line)
    except ValueError: continue
    if revoked_at is None and "group: revoked" in r.get("message", ""):
        revoked_at = t(r["time"])
    elif revoked_at is not None and r.get("event") == "batch" and r.get("records", 0) > 0:
        start = t(r["time"]) - r["duration"]
        committed = start + sum(r[k] for k in ("plan", "read", "wait", "commit"))
        if start < revoked_at - 0.001 and committed > revoked_at + 0.001:
            print("turn %s: %s records planned %.3f s before the revocation, committed %.3f s after it"
                  % (r.get("turn"), r["records"], revoked_at - start, committed - revoked_at))
            break
PY
)
fenced_b=$(kt_log_count fenced "$WORK/member1.log")
note "A revoked while its commit waited: $revoked; B fenced $fenced_b time(s); ${offender:-no batch of A committed across its revocation}"
[[ -z $offender ]] || { jq -c 'select(.event == "batch" or (.message | test("group:"))) | {time, message: .message[0:90], duration}' "$WORK/member0.log" >&2 || true; fail "member A committed a batch after its partitions were revoked: $offender"; }
