# tests/integration/ha.sh - helpers for the database failover tests
# (22*-galera-*.sh, 23*-replica-*.sh). Source it after lib.sh and faults.sh.
#
# They run against the topologies of `scripts/services start --mysql
# galera|replica` (KT_MYSQL_TOPOLOGY in its env file), which meson points
# them at (KT_SERVICES_ENV, the suites galera and replica). Node N is
# numbered from 1; node 1 is the Galera node ktally's lists start with, or
# the primary. Any broker: the tests use lib.sh's broker-independent
# helpers only. On exit, whatever a test broke is repaired (nodes resumed,
# restarted, rejoined; a promoted replica's topology made anew), so that a
# failing test does not take the next one down with it.

read -r -a HA_PORTS <<< "${KT_MYSQL_PORTS:-}"
read -r -a HA_SOCKETS <<< "${KT_MYSQL_SOCKETS:-}"
read -r -a HA_PIDFILES <<< "${KT_MYSQL_PIDFILES:-}"
HA_STOPPED=()    # nodes SIGSTOPped
HA_ISOLATED=()   # Galera nodes cut off from the others

ha_need() {  # ha_need TOPOLOGY: the services run it, every node up (a replica: as new)
  [[ ${KT_MYSQL_TOPOLOGY:-single} == "$1" ]] \
    || fail "needs MariaDB as --mysql $1 (KT_SERVICES_DIR=$KT_BUILD/services-$1 scripts/services start --mysql $1), but $env_file is ${KT_MYSQL_TOPOLOGY:-single}"
  local n
  for ((n = 1; n <= ${#HA_PORTS[@]}; n++)); do
    ha_up "$n" || fail "MariaDB node $n ($(ha_port "$n")) does not answer"
  done
  if [[ $1 == replica ]]; then ha_replica_fresh; fi
}

ha_port() { echo "${HA_PORTS[$(($1 - 1))]}"; }

# ha_job NAME: a new database and 4-partition topic NAME_..., data arriving
# (kt_feed_start feed), and ktally (supervisor "ktally", $WORK/ktally.log)
# writing them in tiny batches back to back (a kill is likely to find a
# transaction open), given every node in order, until its 5th commit.
# Sets db, topic, log and run_args.
ha_job() {
  db=$(kt_db_name "$(kt_new_db "$1")")
  topic=$(kt_new_topic "$1" 4)
  log=$WORK/ktally.log
  run_args=(run --brokers "$KT_BROKERS" --topic "$topic" --db "$(ha_uri "$db" 1 2 3)"
            --mode "$KT_MODE" --interval 0 --max-per-partition 20 --log-format json)
  kt_feed_start feed "$topic" 3000 3000
  kt_supervise ktally "${run_args[@]}"
  kt_wait_for 60 committed_since 5 || kt_sup_stuck ktally "no commits within 60 s"
}
# ha_job_end: the feeder stopped, ktally at the end, stopped; no exit of
# its own allowed; then kt_fault_verify (exact, offsets, audit).
ha_job_end() {
  local messages exits
  kt_feed_stop feed
  messages=$(<"$WORK/feed.messages")
  kt_wait_for 60 kt_offsets_reach "$db" "$topic" "$messages" \
    || kt_sup_stuck ktally "ktally did not reach the end within 60 s"
  kt_sup_stop ktally
  exits=$(kt_sup_check ktally)
  [[ $exits == 0 ]] || fail "ktally exited by itself: $exits (it must ride a node's failure out)"
  kt_fault_verify "$db" "$topic" "$WORK/feed.truth" "$messages" "${run_args[@]}"
}
commits() { kt_commits "$log"; }
committed_since() { (($(commits) > $1)); }

ha_sql() {  # ha_sql N DB SQL...: SQL on node N, tab-separated, no headers
  local n=$1 db=$2; shift 2
  mariadb --no-defaults -h 127.0.0.1 -P "$(ha_port "$n")" -u "$KT_MYSQL_USER" \
    -p"$KT_MYSQL_PASSWORD" --connect-timeout=3 -N -B "$db" -e "$*"
}

ha_root() {  # ha_root N SQL...: as root over node N's socket (works on a stopped-replication node)
  local n=$1; shift
  mariadb --no-defaults -S "${HA_SOCKETS[$((n - 1))]}" -uroot --connect-timeout=3 -N -B -e "$*"
}

ha_up() {
  mariadb-admin --no-defaults -h 127.0.0.1 -P "$(ha_port "$1")" -u "$KT_MYSQL_USER" \
    -p"$KT_MYSQL_PASSWORD" --connect-timeout=2 ping > /dev/null 2>&1
}

ha_use() {  # ha_use N: lib.sh's kt_sql (kt_check_counts, kt_offset_sum...) reads node N
  KT_MYSQL_PORT=$(ha_port "$1")
}

ha_uri() {  # ha_uri DB N...: a --db listing nodes N... in that order
  local db=$1 hosts="" n; shift
  for n in "$@"; do hosts+="${hosts:+,}127.0.0.1:$(ha_port "$n")"; done
  echo "mysql://$KT_MYSQL_USER:$KT_MYSQL_PASSWORD@$hosts/$db"
}

ha_writers() {  # ha_writers DB: the nodes where ktally holds a connection to DB
  local n
  for ((n = 1; n <= ${#HA_PORTS[@]}; n++)); do
    [[ $(ha_root "$n" "SELECT COUNT(*) FROM information_schema.processlist
                       WHERE user = '$KT_MYSQL_USER' AND db = '$1'" 2>/dev/null) -gt 0 ]] \
      && echo "$n"
  done
  return 0
}

ha_writer() {  # ha_writer DB: the one node ktally writes DB on (waits up to 30 s for one)
  local deadline=$((SECONDS + 30)) w
  while ((SECONDS < deadline)); do
    mapfile -t w < <(ha_writers "$1")
    if ((${#w[@]} == 1)); then echo "${w[0]}"; return 0; fi
    sleep 0.2
  done
  fail "ktally is connected to ${#w[@]} nodes for $1, not one: ${w[*]}"
}

ha_services() {  # ha_services ARGS...: scripts/services on this topology; its output in $WORK/services.out
  "$KT_SERVICES" "$@" >> "$WORK/services.out" 2>&1 \
    || { tail -n 20 "$WORK/services.out" >&2; fail "scripts/services $* failed"; }
}

ha_kill() { ha_services kill-mysql "$1"; }

ha_restart() {  # ha_restart N: kill -9 if running, start again (Galera: rejoin); prints the ms it took
  local t0
  t0=$(date +%s%N)
  ha_services restart-mysql "$1"
  echo $((($(date +%s%N) - t0) / 1000000))
}

ha_pid() { cat "${HA_PIDFILES[$(($1 - 1))]}"; }

ha_stop() {  # ha_stop N: SIGSTOP node N (it hangs; the others stop hearing it)
  kill -STOP "$(ha_pid "$1")" || fail "cannot SIGSTOP node $1"
  HA_STOPPED+=("$1")
}

ha_cont() {  # ha_cont N: SIGCONT node N
  kill -CONT "$(ha_pid "$1")" 2>/dev/null || true
  local keep=() n
  for n in "${HA_STOPPED[@]}"; do [[ $n == "$1" ]] || keep+=("$n"); done
  HA_STOPPED=("${keep[@]}")
}

ha_wsrep() {  # ha_wsrep N VARIABLE: a wsrep status variable of node N (empty: no answer)
  ha_root "$1" "SHOW STATUS LIKE '$2'" 2>/dev/null | cut -f2
}

ha_ready() { [[ $(ha_wsrep "$1" wsrep_ready) == ON && $(ha_wsrep "$1" wsrep_local_state_comment) == Synced ]]; }

ha_isolate() {  # ha_isolate N: node N leaves the cluster's primary component (Galera)
  HA_ISOLATED+=("$1")
  ha_root "$1" "SET GLOBAL wsrep_provider_options = 'gmcast.isolate=1'" \
    || fail "cannot isolate node $1"
}

ha_join() {  # ha_join N: node N back in the cluster; waits until it is Synced
  ha_root "$1" "SET GLOBAL wsrep_provider_options = 'gmcast.isolate=0'" \
    || fail "cannot bring node $1 back"
  local keep=() n
  for n in "${HA_ISOLATED[@]}"; do [[ $n == "$1" ]] || keep+=("$n"); done
  HA_ISOLATED=("${keep[@]}")
  kt_wait_for 120 ha_ready "$1" || fail "node $1 not Synced within 120 s of rejoining"
}

ha_commit_stuck() {  # ha_commit_stuck N DB: a kt session on node N is in COMMIT on DB
  [[ $(ha_root "$1" "SELECT COUNT(*) FROM information_schema.processlist
                     WHERE user = '$KT_MYSQL_USER' AND db = '$2' AND info = 'COMMIT'" \
       2>/dev/null) -gt 0 ]]
}

# ha_in_commit DB LOG ACTION: ACTION N (ha_kill, ha_isolate) is done to
# the node N ktally writes DB on while one of its COMMITs is in flight
# there: another node is frozen (SIGSTOP), which holds Galera's commits
# (flow control), until the writer is seen in COMMIT; then thawed. Up to 5
# tries, each after a commit (LOG: ktally's); sets HA_NODE to the writer.
ha_in_commit() {
  local db=$1 log=$2 action=$3 try frozen held=0
  for ((try = 0; try < 5 && !held; try++)); do
    kt_wait_for 60 eval "(($(kt_commits "$log")" '< $(kt_commits "$log")))' \
      || fail "no commit before try $try"
    HA_NODE=$(ha_writer "$db")
    frozen=$((HA_NODE % ${#HA_PORTS[@]} + 1))
    ha_stop "$frozen"
    if kt_wait_for 3 ha_commit_stuck "$HA_NODE" "$db"; then
      "$action" "$HA_NODE"
      held=1
    fi
    ha_cont "$frozen"
    kt_wait_for 60 ha_ready "$frozen" || fail "node $frozen not back in the cluster"
  done
  ((held)) || fail "no COMMIT could be held in flight in 5 tries"
}

# ha_commit_failed LOG: ktally saw a COMMIT fail: a batch's (its answer
# lost: read back, "lost-commit"), or in idempotent mode perhaps the one
# that stores the offsets after the counts (the covered offsets make a
# lost one harmless: retried as any failure).
ha_commit_failed() {
  if [[ $KT_MODE == idempotent ]]; then
    (($(kt_log_count_if '.event == "lost-commit" or (.event == "retry" and (.message | test("cannot commit")))' "$1") > 0))
  else
    (($(kt_log_count lost-commit "$1") > 0))
  fi
}

ha_replica_fresh() {  # a primary and its replica as new (a test before may have promoted)
  [[ $(ha_root 2 "SELECT @@read_only") == 1 && -n $(ha_root 2 "SHOW SLAVE STATUS") ]] && return 0
  ha_services reset-mysql
  # shellcheck disable=SC1090
  source "$env_file"
}

ha_caught_up() {  # the replica applied everything the primary logged
  [[ $(ha_root 1 "SELECT @@gtid_binlog_pos") == "$(ha_root 2 "SELECT @@gtid_slave_pos")" ]]
}

# ha_gap LOG...: the longest wait between two
# committed batches (the time a failover cost), from the log's own times.
ha_gap() {
  cat "$@" | jq -Rrn '[inputs | fromjson? | objects | select(.event == "batch") | .time
                      | sub("\\.[0-9]+Z$"; "Z") as $s | (.[20:23] | tonumber / 1000) as $ms
                      | ($s | fromdateiso8601) + $ms] | sort
                     | [range(1; length) as $i | .[$i] - .[$i - 1]] | max // 0
                     | . * 10 | round / 10'
}

ha_repair() {  # every node back as the topology wants it
  local n
  for n in "${HA_STOPPED[@]}"; do kill -CONT "$(ha_pid "$n")" 2>/dev/null || true; done
  for n in "${HA_ISOLATED[@]}"; do
    ha_root "$n" "SET GLOBAL wsrep_provider_options = 'gmcast.isolate=0'" 2>/dev/null || true
  done
  if [[ ${KT_MYSQL_TOPOLOGY:-} == replica && -n ${HA_PROMOTED:-} ]]; then
    "$KT_SERVICES" reset-mysql > "$WORK/reset.out" 2>&1 \
      || { tail "$WORK/reset.out" >&2; echo "$TEST_NAME: could not reset the replica topology" >&2; }
    return 0
  fi
  for ((n = 1; n <= ${#HA_PORTS[@]}; n++)); do
    # A node wedged by concurrent DDL (a TOI statement waiting forever
    # behind a commit that waits for it, MariaDB 10.11) frees only when
    # restarted.
    if [[ ${KT_MYSQL_TOPOLOGY:-} == galera ]] && [[ $(ha_root "$n" "SELECT COUNT(*) FROM
         information_schema.processlist WHERE user = '$KT_MYSQL_USER' AND command != 'Sleep'
         AND time > 30" 2>/dev/null) -gt 0 ]]; then
      echo "$TEST_NAME: node $n is wedged: restarting it" >&2
      "$KT_SERVICES" restart-mysql "$n" > /dev/null 2>&1 || true
    fi
    if ! ha_up "$n"; then
      "$KT_SERVICES" restart-mysql "$n" > /dev/null 2>&1 \
        || echo "$TEST_NAME: could not restart MariaDB node $n" >&2
    fi
  done
  if [[ ${KT_MYSQL_TOPOLOGY:-} == galera ]]; then
    for ((n = 1; n <= ${#HA_PORTS[@]}; n++)); do
      kt_wait_for 120 ha_ready "$n" || echo "$TEST_NAME: node $n is not Synced" >&2
    done
  fi
}

ha_exit() {
  local rc=$?
  set +e
  ha_repair
  (exit "$rc")
  kt_fault_cleanup
}
trap 'ha_exit' EXIT
