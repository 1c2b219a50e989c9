#!/usr/bin/env bash
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
# Asynchronous replication, through one failover: a replay of a fixed range
# and `ktally reset --execute` of a live job. The replica's SQL thread is
# stopped (what the primary commits from then on is lost), the primary is
# killed (kill -9) while the replay is halfway and the live job commits,
# and `reset --to latest --execute` is started at once, when no server of
# its list can take it (node 1 dead, node 2 read-only): it waits, as at
# start-up, and runs on node 2 once it is promoted. Each given both servers:
#
#   the replay continues on node 2 from the offsets node 2 holds (its own
#     counts went back with them) and ends exact: its table equals the
#     truth of the whole range, nothing lost, nothing twice;
#   the reset plans from node 2's offsets (not the lost ones), and what it
#     skipped, replayed into a table of its own, plus error_log equals
#     everything produced, each line once, with the live job fenced
#     against it and going on by itself; `ktally audit` is clean.
#
# Transactional only: a replay has no idempotent mode, and an idempotent
# job's reset is checked by 162-reset-idempotent. Red before: no hosts
# list; a reset would have planned on whatever one server it was given.
# Needs `scripts/services start --mysql replica`; any broker.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/faults.sh"
source "$(dirname "$0")/ha.sh"

ha_need replica
t0=$SECONDS

db=$(kt_db_name "$(kt_new_db rrr)")
uri=$(ha_uri "$db" 1 2)
live=$(kt_new_topic rrlive 3)
fixed=$(kt_new_topic rrfixed 3)
# Each partition's end is what kt-gen wrote to it.
ends=""
for p in 0 1 2; do
  kt_gen "$fixed" --lines 10000 --partition "$p" --seed "$((KT_SEED * 3 + p))" \
    --start "2017-07-2$p 10:00:00" --truth "$WORK/fixed$p.truth" > "$WORK/fixed$p.gen" \
    || fail "kt-gen failed"
  ends+="$p:$(sed -n 's/.*messages=\([0-9]*\).*/\1/p' "$WORK/fixed$p.gen"),"
done
kt_sum_truths "$WORK"/fixed?.truth > "$WORK/fixed.truth"
kt_wait_for 30 ha_caught_up || fail "the replica does not catch up"

run_args=(run --brokers "$KT_BROKERS" --topic "$live" --db "$uri" --interval 0
          --max-per-partition 30 --log-format json)
kt_feed_start feed "$live" 2000 2000
kt_supervise live "${run_args[@]}"
committed_since() { (($(kt_commits "$WORK/live.log") > $1)); }
kt_wait_for 60 committed_since 5 || kt_sup_stuck live "the live job committed nothing in 60 s"

# The whole range of the fixed topic, in small batches.
"$KTALLY" replay --brokers "$KT_BROKERS" --topic "$fixed" --db "$uri" --from 0:0,1:0,2:0 \
  --until "${ends%,}" --table incident --max-per-partition 2 --log-format json \
  2> "$WORK/replay.log" &
replay=$!; KT_CHILDREN+=("$replay")
replay_sum() { ha_sql "$1" "$db" "SELECT COALESCE(SUM(\`offset\`), 0) FROM kafka_offset WHERE job LIKE 'replay.%'"; }
kt_wait_for 60 eval '(($(replay_sum 1) > 1000))' || fail "the replay does not move"
# Held while the replica catches up: on a fast machine the replay finished
# its range meanwhile, leaving nothing for the primary alone to commit.
kill -STOP "$replay" 2>/dev/null || fail "the replay ended too soon: make its range longer"
kt_wait_for 30 ha_caught_up || fail "the replica does not catch up"

ha_root 2 "STOP SLAVE SQL_THREAD" || fail "cannot stop the replica's SQL thread"
on_replica=$(replay_sum 2)
kill -CONT "$replay"
kt_wait_for 60 eval '(($(replay_sum 1) > on_replica + 2000))' || fail "the replay stopped before the failover"
# Held there (however fast this machine is) until node 2 is promoted: it
# lives through the failover, its connection to node 1 dead meanwhile.
kill -STOP "$replay" 2>/dev/null || fail "the replay ended before the failover: make its range longer"
kt_wait_for 60 committed_since "$(($(kt_commits "$WORK/live.log") + 10))" || kt_sup_stuck live "the live job stopped"
lost_replay=$(($(replay_sum 1) - on_replica))

ha_kill 1
"$KTALLY" reset --brokers "$KT_BROKERS" --db "$uri" --job "$live" --to latest --execute --json \
  --startup-timeout 60 > "$WORK/reset.json" 2> "$WORK/reset.log" &
reset=$!; KT_CHILDREN+=("$reset")
skipped_replica() { (($(kt_log_count_if '.event == "db-skip" and .reason == "read-only"' "$WORK/live.log") > 0)); }
kt_wait_for 30 skipped_replica || kt_sup_stuck live "the live job did not skip the read-only node 2"
kill -0 "$reset" 2>/dev/null || { cat "$WORK/reset.log" >&2; fail "the reset did not wait for a writable server"; }
HA_PROMOTED=1
ha_services promote-replica
kill -CONT "$replay"
wait "$reset" || { cat "$WORK/reset.log" >&2; fail "the reset failed through the failover"; }
grep -q "is read-only" "$WORK/reset.log" || fail "the reset did not say it skipped the read-only node 2"
wait "$replay" || { tail -5 "$WORK/replay.log" >&2; fail "the replay failed through the failover"; }

ha_use 2
kt_sql "$db" "SELECT log_time, log_count FROM incident ORDER BY log_time" > "$WORK/incident.tsv"
diff -q "$WORK/incident.tsv" "$WORK/fixed.truth" > /dev/null \
  || { diff "$WORK/incident.tsv" "$WORK/fixed.truth" | head >&2; fail "the replay's table differs from the truth of its range"; }

kt_feed_stop feed
messages=$(<"$WORK/feed.messages")
kt_wait_for 60 kt_offsets_reach "$db" "$live" "$messages" || kt_sup_stuck live "the live job did not reach the end"
kt_sup_stop live
exits=$(kt_sup_check live)
[[ $exits == 0 ]] || fail "the live job exited by itself: $exits"

# What the reset skipped, replayed apart: with error_log, everything once.
read -r from until < <(/usr/bin/python3 - "$WORK/reset.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["executed"] and not d["rebuild"], d
parts = [(p["partition"], s) for p in d["partitions"] for s in p["skipped"]]
print(",".join("%d:%d" % (p, s[0]) for p, s in parts) or "-",
      ",".join("%d:%d" % (p, s[1]) for p, s in parts) or "-")
PY
)
if [[ $from != - ]]; then
  "$KTALLY" replay --brokers "$KT_BROKERS" --topic "$live" --db "$uri" --from "$from" \
    --until "$until" --table skipped 2>> "$WORK/replay2.log" || fail "the replay of the reset's skips failed"
  kt_sql "$db" "SELECT log_time, log_count FROM skipped" > "$WORK/skipped.tsv"
else
  : > "$WORK/skipped.tsv"
fi
kt_sql "$db" "SELECT log_time, log_count FROM error_log" > "$WORK/counted.tsv"
kt_sum_truths "$WORK/counted.tsv" "$WORK/skipped.tsv" | diff - <(kt_sum_truths "$WORK/feed.truth") > "$WORK/diff" \
  || { head "$WORK/diff" >&2; fail "error_log + the reset's skipped ranges differ from the truth"; }
kt_audit "$uri"
skipped_n=$(jq '[.partitions[].skipped[] | .[1] - .[0]] | add // 0' "$WORK/reset.json")
note "$TEST_NAME: the replay lost $lost_replay offsets with the primary and read them again on" \
  "node 2, exact; the reset waited for node 2's promotion, skipped $skipped_n offsets planned from" \
  "node 2's offsets, error_log + skips exact; the live job: $(kt_log_count retry "$WORK/live.log")" \
  "batches retried, $(kt_log_count fenced "$WORK/live.log") fenced, $((SECONDS - t0)) s"
