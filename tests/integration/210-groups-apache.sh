#!/usr/bin/env bash
# Consumer groups on Apache Kafka's own group coordinator, with every
# assignment strategy ktally takes (librdkafka's partition.assignment.
# strategy through -X: ktally's default, roundrobin on librdkafka before
# 2.3; range; cooperative-sticky), side by side, each its own group,
# topic and database, while data arrives: three members join one after
# the other, one leaves with SIGTERM (it must exit 0), one is killed -9
# (the coordinator moves its partitions once session.timeout.ms has
# passed: the last member must read them alone), and a new member joins
# and must commit. Then every counted minute equals kt-gen --truth and
# the audit chain is whole. KT_MODE: transactional or idempotent. Red if
# a strategy loses or doubles a count, a member exits other than 0 on
# SIGTERM, the killed member's partitions are never taken over, or a
# member that joins late never gets a partition.
# broker: apache — the real group coordinator (session timeouts, JoinGroup/SyncGroup with each assignor); the mock's is simplified
source "$(dirname "$0")/lib.sh"

KT_MODE=${KT_MODE:-transactional}
strategies=(default range cooperative-sticky)

# scenario IDX STRATEGY: one group's story; exits non-zero with a FAIL line.
scenario() {
  local idx=$1 strategy=$2 w=$WORK/s$1 db_uri db topic group gen messages t0=$SECONDS
  local -a pids=() extra=()
  KT_CHILDREN=()
  # Its own children only; the exit status is the scenario's, not the last kill's.
  trap 'rc=$?; for p in "${KT_CHILDREN[@]}"; do kill -9 "$p" 2> /dev/null || true; done; exit $rc' EXIT
  TEST_NAME="$TEST_NAME[$strategy]"
  mkdir -p "$w"
  WORK=$w  # lib.sh's helpers write their scratch files here: one set per scenario
  db_uri=$(kt_new_db "grp$idx"); db=$(kt_db_name "$db_uri")
  topic=$(kt_new_topic "grp$idx" 6)
  group=ga${idx}_$RUN_ID
  [[ $strategy == default ]] || extra=(-X "partition.assignment.strategy=$strategy")
  member() {
    "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --group "$group" \
      --mode "$KT_MODE" --interval 0.3 --max-per-partition 2000 "${extra[@]}" \
      -X session.timeout.ms=6000 -X heartbeat.interval.ms=500 \
      --log-format json 2>> "$w/member$1.log" &
    pids[$1]=$!; KT_CHILDREN+=($!)
  }
  committed_by() {  # committed_by PID: how many audit rows that process wrote
    kt_sql "$db" "SELECT COUNT(*) FROM ktally_batches WHERE job = '$topic' AND member LIKE '%-$1@%'"
  }
  has_committed() { (($(committed_by "$1") > 0)); }
  all_committed() { local p; for p in "$@"; do has_committed "$p" || return 1; done; }
  offsets_reach() { [[ $(kt_offset_sum "$db" "$topic") == "$1" ]]; }

  kt_gen "$topic" --lines 60000 --seed "$((KT_SEED + idx))" --rate 5000 --truth "$w/t1" > "$w/gen1" &
  gen=$!; KT_CHILDREN+=("$gen")
  # Joining, one after the other: each join is a rebalance.
  member 0; sleep 1; member 1; sleep 1; member 2
  kt_wait_for 40 all_committed "${pids[0]}" "${pids[1]}" "${pids[2]}" \
    || fail "the three members did not all commit within 40 s"
  # Leaving: SIGTERM, exit 0, its partitions handed over at once.
  kt_stop "${pids[1]}" || fail "member 1 did not exit 0 on SIGTERM"
  # Dying: kill -9; the coordinator waits out the session timeout.
  kill -9 "${pids[2]}"; wait "${pids[2]}" 2> /dev/null || true
  wait "$gen" || fail "kt-gen failed"
  messages=$(sed 's/.*messages=\([0-9]*\).*/\1/' "$w/gen1")
  kt_wait_for 60 offsets_reach "$messages" \
    || fail "member 0 alone did not reach the high watermarks within 60 s (the killed member's partitions not taken over?)"
  # A member joining late gets partitions and commits.
  kt_gen "$topic" --lines 20000 --seed "$((KT_SEED + idx + 10))" --rate 5000 --truth "$w/t2" > "$w/gen2" &
  gen=$!; KT_CHILDREN+=("$gen")
  member 1
  kt_wait_for 40 has_committed "${pids[1]}" || fail "the member that joined late never committed"
  wait "$gen" || fail "kt-gen failed"
  messages=$((messages + $(sed 's/.*messages=\([0-9]*\).*/\1/' "$w/gen2")))
  kt_wait_for 60 offsets_reach "$messages" || fail "the group did not reach the high watermarks within 60 s"
  kt_stop "${pids[0]}" || fail "member 0 did not exit 0 on SIGTERM"
  kt_stop "${pids[1]}" || fail "the late member did not exit 0 on SIGTERM"
  kt_sum_truths "$w/t1" "$w/t2" > "$w/truth"
  kt_check_counts "$db" "$w/truth"
  kt_audit "$db_uri"
  protocol=$(grep -ho '(cooperative rebalancing)\|(eager rebalancing)' "$w"/member*.log | sort -u | tr -d '()' | paste -sd,)
  echo "$strategy: 80000 lines exact, $(kt_log_count fenced "$w"/member*.log) fenced," \
    "$(kt_log_count_if '.event == "abandoned" and .cause == "rebalance"' "$w"/member*.log) batches abandoned to rebalances," \
    "${protocol:-no assignment logged}, in $((SECONDS - t0)) s" > "$w/summary"
}

declare -a spids=()
for i in "${!strategies[@]}"; do
  scenario "$i" "${strategies[$i]}" &
  spids[$i]=$!; KT_CHILDREN+=($!)
done
failed=0
for i in "${!strategies[@]}"; do
  if ! wait "${spids[$i]}"; then
    failed=1
    for log in "$WORK/s$i"/member*.log; do
      echo "--- ${strategies[$i]}: the end of $log" >&2; tail -5 "$log" >&2
    done
  fi
done
((failed == 0)) || fail "a strategy failed (its FAIL line above)"
for i in "${!strategies[@]}"; do note "$TEST_NAME ($KT_MODE): $(cat "$WORK/s$i/summary")"; done
