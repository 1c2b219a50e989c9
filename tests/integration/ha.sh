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

ha_need() {  # ha_need TOPOLOGY: the services run it, every node up
  [[ ${KT_MYSQL_TOPOLOGY:-single} == "$1" ]] \
    || fail "needs MariaDB as --mysql $1 (KT_SERVICES_DIR=$KT_BUILD/services-$1 scripts/services start --mysql $1), but $env_file is ${KT_MYSQL_TOPOLOGY:-single}"
  local n
  for ((n = 1; n <= ${#HA_PORTS[@]}; n++)); do
    ha_up "$n" || fail "MariaDB node $n ($(ha_port "$n")) does not answer"
  done
}

ha_port() { echo "${HA_PORTS[$(($1 - 1))]}"; }

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

# ha_log_seconds_without_commits LOG...: the longest wait between two
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
