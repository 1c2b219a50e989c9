# scripts/lib/mysql-cluster.sh - the MariaDB topologies of several servers
# that `scripts/services start --mysql galera|replica` runs, for the
# database failover tests (sql/HA.md). Sourced by scripts/services, whose
# helpers (die, say, live_pid, port_busy, wait_gone, find_mariadbd,
# need_cmd) and paths ($dir, $sockdir) it uses.
#
#   galera   three nodes of one Galera cluster (Debian's galera-4) on
#            127.0.0.1, rsync state transfer; node 1 bootstraps it
#   replica  node 1 a primary, node 2 its asynchronous GTID replica
#            (read_only); promote-replica makes node 2 the primary, and a
#            restarted node 1 then comes back read_only (fenced: its lost
#            transactions must not take writes again)
#
# Nodes are numbered from 1; each has <state>/mysql-cluster/nodeN/ (data,
# tmp, error.log, its ports, its role) and a socket under $sockdir. As
# root, the servers run as the mysql user: rsync state transfer drops to
# `nobody` under a root server and then cannot read the datadir.
#
# Not for production: `start` after every node stopped bootstraps from
# node 1 whatever the others hold (the services stop node 1 last).

cl_dir=$dir/mysql-cluster
cl_topology_file=$dir/mysql-topology
cl_sockdir=$sockdir/mysql-nodes
cl_galera_lib=${KT_GALERA_PROVIDER:-/usr/lib/galera/libgalera_smm.so}

# The topology recorded by the last `start` (single: the private server).
cluster_topology() {
  if [[ -s $cl_topology_file ]]; then cat "$cl_topology_file"; else echo single; fi
}

cluster_active() { [[ $(cluster_topology) != single ]]; }

cl_nodes() {
  case $(cluster_topology) in
    galera) echo 3 ;;
    replica) echo 2 ;;
    *) echo 0 ;;
  esac
}

cl_node_dir() { echo "$cl_dir/node$1"; }
cl_socket() { echo "$cl_sockdir/node$1.sock"; }
cl_pid() { live_pid "$(cl_node_dir "$1")/mariadbd.pid" "--datadir=$(cl_node_dir "$1")/data"; }

# cl_port N WHICH: a node's port: sql, gcomm (Galera's group), ist, sst.
cl_port() {
  local -a p
  read -r -a p < "$(cl_node_dir "$1")/ports"
  case $2 in
    sql) echo "${p[0]}" ;;
    gcomm) echo "${p[1]}" ;;
    ist) echo "${p[2]}" ;;
    sst) echo "${p[3]}" ;;
  esac
}

cl_role() { cat "$(cl_node_dir "$1")/role" 2>/dev/null || echo member; }

cl_sql() {  # cl_sql N SQL: as root over node N's socket, tab-separated
  local n=$1; shift
  mariadb --no-defaults -S "$(cl_socket "$n")" -uroot -N -B --connect-timeout=2 -e "$*"
}

cl_ping() {
  mariadb-admin --no-defaults -S "$(cl_socket "$1")" -uroot --connect-timeout=2 \
    ping >/dev/null 2>&1
}

# Distinct free ports for every node (a node's four are taken at once, so
# two nodes never pick the same one before either listens).
cl_pick_ports() {  # below the ephemeral range, as pick_port (scripts/services) says why
  local count=$1 want=$2 p i taken=" " out=() top
  top=$(port_ceiling)
  p=$((20000 + RANDOM % (top - 20000)))
  for ((i = 0; i < 2000 && ${#out[@]} < count * want; i++)); do
    p=$((p + 1 > top ? 20000 : p + 1))
    [[ $taken == *" $p "* ]] && continue
    port_busy "$p" && continue
    out+=("$p"); taken+="$p "
  done
  ((${#out[@]} == count * want)) || die "not enough free TCP ports in 20000-$top"
  for ((i = 1; i <= count; i++)); do
    echo "${out[@]:$(((i - 1) * want)):$want}" > "$(cl_node_dir "$i")/ports"
  done
}

cl_gcomm_address() {
  local i list=""
  for ((i = 1; i <= $(cl_nodes); i++)); do list+="${list:+,}127.0.0.1:$(cl_port "$i" gcomm)"; done
  echo "gcomm://$list"
}

# The command that starts node N; "bootstrap" as a second word starts a
# new Galera cluster from it. Printed into the env file too.
cl_cmdline() {
  local n=$1 how=${2:-join} nd
  nd=$(cl_node_dir "$n")
  local -a cmd=(
    "$(find_mariadbd)" --no-defaults
    --datadir="$nd/data" --socket="$(cl_socket "$n")" --port="$(cl_port "$n" sql)"
    --bind-address=127.0.0.1 --pid-file="$nd/mariadbd.pid"
    --log-error="$nd/error.log" --tmpdir="$nd/tmp"
    --skip-name-resolve --max-connections=300 --max-allowed-packet=64M
    --character-set-server=utf8mb4 --collation-server=utf8mb4_general_ci
    --innodb-buffer-pool-size=64M --innodb-log-file-size=48M
    # Durable, as the single server: crash tests expect every
    # acknowledged commit back (Galera's also lives on in the others).
    --innodb-flush-log-at-trx-commit=1
  )
  case $(cluster_topology) in
    galera)
      cmd+=(
        --wsrep-on=ON --wsrep-provider="$cl_galera_lib" --wsrep-cluster-name=ktally
        --wsrep-cluster-address="$(cl_gcomm_address)" --wsrep-node-name="node$n"
        --wsrep-node-address="127.0.0.1:$(cl_port "$n" gcomm)"
        # gcache: enough for incremental transfer (IST) of what a node
        # missed during a test; suspect/inactive: a node killed -9 is out
        # of the view after 3 to 6 s (the defaults: 5 and 15 s).
        --wsrep-provider-options="base_port=$(cl_port "$n" gcomm);ist.recv_addr=127.0.0.1:$(cl_port "$n" ist);gmcast.listen_addr=tcp://127.0.0.1:$(cl_port "$n" gcomm);gcache.size=64M;evs.suspect_timeout=PT3S;evs.inactive_timeout=PT6S;evs.install_timeout=PT6S"
        --wsrep-sst-method=rsync --wsrep-sst-receive-address="127.0.0.1:$(cl_port "$n" sst)"
        --binlog-format=ROW --innodb-autoinc-lock-mode=2 --default-storage-engine=InnoDB
      )
      [[ $how == bootstrap ]] && cmd+=(--wsrep-new-cluster)
      ;;
    replica)
      cmd+=(
        --server-id="$n" --log-bin=mysql-bin --relay-log=relay-bin --binlog-format=ROW
        --sync-binlog=1 --log-slave-updates --gtid-strict-mode=ON
      )
      # A replica, and an old primary back after a promotion, refuse
      # writes (ktally's user has SUPER all the same: it checks @@read_only).
      [[ $(cl_role "$n") != primary ]] && cmd+=(--read-only)
      ;;
  esac
  if [[ $(id -u) == 0 ]]; then cmd+=(--user=mysql); fi
  local line
  line=$(printf '%q ' "${cmd[@]}")
  echo "${line% }"
}

cl_init_node() {
  local n=$1 nd
  nd=$(cl_node_dir "$n")
  [[ -e $nd/initialised ]] && return 0
  rm -rf "$nd/data"
  mkdir -p "$nd/data" "$nd/tmp"
  local -a user=()
  if [[ $(id -u) == 0 ]]; then
    id mysql >/dev/null 2>&1 || die "the mysql user is missing (run scripts/setup)"
    chown -R mysql:mysql "$nd"
    user=(--user=mysql)
  fi
  if ! mariadb-install-db --no-defaults --datadir="$nd/data" \
    --auth-root-authentication-method=normal --skip-test-db "${user[@]}" \
    >"$nd/install.log" 2>&1; then
    tail -n 20 "$nd/install.log" >&2
    die "mariadb-install-db failed for node $n (log: $nd/install.log)"
  fi
  : >"$nd/initialised"
}

# cl_launch N [bootstrap]: starts node N and waits until it answers (a
# Galera joiner answers once its state transfer is done).
cl_launch() {
  local n=$1 how=${2:-join} nd cmd pid launcher tries
  nd=$(cl_node_dir "$n")
  if pid=$(cl_pid "$n"); then
    say "node $n already running (pid $pid)"
    return 0
  fi
  if port_busy "$(cl_port "$n" sql)"; then
    die "port $(cl_port "$n" sql) of node $n is taken by another process"
  fi
  rm -f "$nd/mariadbd.pid"
  if [[ $(id -u) == 0 ]]; then chown -R mysql:mysql "$nd"; fi
  cmd=$(cl_cmdline "$n" "$how")
  eval "setsid $cmd" </dev/null >>"$nd/mariadbd.out" 2>&1 9>&- &
  launcher=$!
  # A joiner may copy the whole datadir first (rsync): minutes on a
  # loaded machine.
  for ((tries = 0; tries < 1800; tries++)); do
    cl_ping "$n" && break
    if ! kill -0 "$launcher" 2>/dev/null && ! cl_pid "$n" >/dev/null; then
      cl_ping "$n" && break
      echo "--- last lines of $nd/error.log:" >&2
      tail -n 25 "$nd/error.log" >&2 || true
      die "node $n exited at start-up"
    fi
    sleep 0.1
  done
  if ! cl_ping "$n"; then
    tail -n 25 "$nd/error.log" >&2 || true
    pid=$(cl_pid "$n" || true)
    if [[ -n $pid ]]; then kill -9 "$pid" 2>/dev/null || true; fi
    die "node $n did not answer within 180 s"
  fi
  cl_wait_ready "$n"
}

# Galera: until the node is Synced (a member of the primary component,
# up to date). Others: answering is ready.
cl_wait_ready() {
  local n=$1 state="" tries
  [[ $(cluster_topology) == galera ]] || return 0
  for ((tries = 0; tries < 1200; tries++)); do
    state=$(cl_sql "$n" "SHOW STATUS LIKE 'wsrep_local_state_comment'" 2>/dev/null | cut -f2)
    [[ $state == Synced ]] && return 0
    sleep 0.1
  done
  die "node $n is not Synced after 120 s (state: ${state:-none}; log: $(cl_node_dir "$n")/error.log)"
}

cl_users() {
  cl_sql 1 "
    CREATE USER IF NOT EXISTS 'kt'@'localhost' IDENTIFIED BY 'ktpass';
    CREATE USER IF NOT EXISTS 'kt'@'127.0.0.1' IDENTIFIED BY 'ktpass';
    CREATE USER IF NOT EXISTS 'kt'@'%' IDENTIFIED BY 'ktpass';
    GRANT ALL PRIVILEGES ON *.* TO 'kt'@'localhost' WITH GRANT OPTION;
    GRANT ALL PRIVILEGES ON *.* TO 'kt'@'127.0.0.1' WITH GRANT OPTION;
    GRANT ALL PRIVILEGES ON *.* TO 'kt'@'%' WITH GRANT OPTION;" ||
    die "cannot create the kt user on node 1"
}

# Node 2 replicates node 1 from the first GTID on: both were installed
# empty, and everything after (users, ktally's databases) is in node 1's
# binary log.
cl_replica_setup() {
  local tries
  [[ -e $(cl_node_dir 2)/replicating ]] && return 0
  cl_sql 1 "CREATE USER IF NOT EXISTS 'repl'@'127.0.0.1' IDENTIFIED BY 'replpass';
            GRANT REPLICATION SLAVE ON *.* TO 'repl'@'127.0.0.1'" ||
    die "cannot create the replication user on node 1"
  cl_sql 2 "STOP SLAVE; SET GLOBAL gtid_slave_pos = '';
            CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = $(cl_port 1 sql),
              MASTER_USER = 'repl', MASTER_PASSWORD = 'replpass',
              MASTER_USE_GTID = slave_pos, MASTER_CONNECT_RETRY = 1;
            START SLAVE" || die "cannot start replication on node 2"
  : >"$(cl_node_dir 2)/replicating"
}

cl_replica_caught_up() {
  [[ $(cl_sql 1 "SELECT @@gtid_binlog_pos" 2>/dev/null) == \
     "$(cl_sql 2 "SELECT @@gtid_slave_pos" 2>/dev/null)" ]]
}

# cluster_start TOPOLOGY: every node up (Galera: Synced), the kt user.
cluster_start() {
  local topology=$1 n was
  was=$(cluster_topology)
  if [[ $was != "$topology" ]]; then
    if [[ $was == single ]]; then
      mysql_pid >/dev/null && die "the single server runs: scripts/services stop first"
    else
      cluster_running && die "the $was servers run: scripts/services stop first"
    fi
  fi
  need_cmd mariadb-install-db
  need_cmd mariadb-admin
  need_cmd mariadb
  if [[ $topology == galera ]]; then
    [[ -r $cl_galera_lib ]] || die "$cl_galera_lib is missing (galera-4; run scripts/setup)"
    need_cmd rsync
  fi
  if [[ $was != "$topology" ]]; then rm -rf "$cl_dir"; fi
  echo "$topology" >"$cl_topology_file"
  mkdir -p "$cl_sockdir"
  if [[ $(id -u) == 0 ]]; then chown mysql:mysql "$cl_sockdir"; fi
  for ((n = 1; n <= $(cl_nodes); n++)); do mkdir -p "$(cl_node_dir "$n")"; done
  [[ -s $(cl_node_dir 1)/ports ]] || cl_pick_ports "$(cl_nodes)" 4
  if [[ $topology == replica && ! -e $(cl_node_dir 1)/role ]]; then
    echo primary >"$(cl_node_dir 1)/role"
    echo replica >"$(cl_node_dir 2)/role"
  fi
  for ((n = 1; n <= $(cl_nodes); n++)); do cl_init_node "$n"; done

  local t0=$SECONDS first=1
  if [[ $topology == galera ]] && ! cluster_any_running; then
    cl_bootstrap_mark 1
    cl_launch 1 bootstrap
    first=2
  fi
  for ((n = first; n <= $(cl_nodes); n++)); do cl_launch "$n"; done
  cl_users
  if [[ $topology == replica ]]; then
    [[ $(cl_role 2) == replica ]] && cl_replica_setup
    local tries
    for ((tries = 0; tries < 300; tries++)); do
      [[ $(cl_role 2) != replica ]] || cl_replica_caught_up && break
      sleep 0.1
    done
  fi
  say "mariadb $topology running: $(cluster_describe) ($((SECONDS - t0)) s)"
}

# A Galera node that shut down last (or crashed: tests only) may start a
# new cluster.
cl_bootstrap_mark() {
  local f
  f=$(cl_node_dir "$1")/data/grastate.dat
  [[ -e $f ]] && sed -i 's/^safe_to_bootstrap: 0/safe_to_bootstrap: 1/' "$f"
  return 0
}

cluster_any_running() {
  local n
  for ((n = 1; n <= $(cl_nodes); n++)); do cl_pid "$n" >/dev/null && return 0; done
  return 1
}

cluster_running() { cluster_any_running; }

cluster_describe() {
  local n out=""
  for ((n = 1; n <= $(cl_nodes); n++)); do
    out+="${out:+, }node $n"
    [[ $(cluster_topology) == replica ]] && out+=" ($(cl_role "$n"))"
    out+=" port $(cl_port "$n" sql)"
    cl_pid "$n" >/dev/null || out+=" (down)"
  done
  echo "$out"
}

cl_check_node() {
  local n=$1
  [[ $n =~ ^[0-9]+$ ]] && ((n >= 1 && n <= $(cl_nodes))) ||
    die "no node $n: the $(cluster_topology) servers are nodes 1 to $(cl_nodes)"
}

cluster_kill() {
  local n=$1 pid
  cl_check_node "$n"
  pid=$(cl_pid "$n") || { say "node $n is not running"; return 0; }
  kill -KILL "$pid"
  wait_gone "$pid" 10 || die "node $n (pid $pid) survives SIGKILL"
  rm -f "$(cl_node_dir "$n")/mariadbd.pid"
  say "node $n killed (pid $pid)"
}

# cl_transfer_ports_free N: a node's state-transfer ports (IST, SST) are
# listened on only while it joins, so another process may have taken one
# since the cluster started (seen: another checkout's Kafka broker on a
# node's IST port; the join then failed for good, "Address already in
# use", "Will never receive state"). A taken one is replaced by a free
# port: a joiner sends both to its donor, nobody else keeps them.
cl_transfer_ports_free() {
  local n=$1 i p all top taken=" " changed=no
  local -a ports
  read -r -a ports < "$(cl_node_dir "$n")/ports"
  for ((i = 1; i <= $(cl_nodes); i++)); do taken+="$(<"$(cl_node_dir "$i")/ports") "; done
  for i in 2 3; do
    port_busy "${ports[i]}" || continue
    top=$(port_ceiling)
    p=$((20000 + RANDOM % (top - 20000)))
    for ((all = 0; all < 2000; all++)); do
      p=$((p + 1 > top ? 20000 : p + 1))
      [[ $taken == *" $p "* ]] || port_busy "$p" || break
    done
    say "node $n: port ${ports[i]} is taken by another process: state transfers on $p"
    ports[i]=$p taken+="$p " changed=yes
  done
  [[ $changed == no ]] || echo "${ports[@]}" > "$(cl_node_dir "$n")/ports"
}

# cluster_restart N: kill -9 if running, start again on its datadir and
# ports; a Galera node rejoins (state transfer), unless it is alone.
cluster_restart() {
  local n=$1 t0 how=join
  cl_check_node "$n"
  cluster_kill "$n"
  [[ $(cluster_topology) != galera ]] || cl_transfer_ports_free "$n"
  t0=$(date +%s%N)
  if [[ $(cluster_topology) == galera ]] && ! cluster_any_running; then
    cl_bootstrap_mark "$n"
    how=bootstrap
  fi
  cl_launch "$n" "$how"
  say "node $n running again (pid $(cl_pid "$n"), port $(cl_port "$n" sql)," \
    "$((($(date +%s%N) - t0) / 1000000)) ms)"
}

cluster_stop() {
  local n pid
  cluster_active || return 0
  [[ -d $cl_dir ]] || return 0
  # Galera: node 1 last, so that it may bootstrap the next start.
  for ((n = $(cl_nodes); n >= 1; n--)); do
    pid=$(cl_pid "$n") || continue
    kill -TERM "$pid" 2>/dev/null || true
    if ! wait_gone "$pid" 30; then
      say "node $n (pid $pid) ignored SIGTERM for 30 s: killing it"
      kill -KILL "$pid" 2>/dev/null || true
      wait_gone "$pid" 10 || die "node $n (pid $pid) survives SIGKILL"
    fi
    rm -f "$(cl_node_dir "$n")/mariadbd.pid"
    say "node $n stopped"
  done
}

# The replica (node 2) becomes the primary, as a failover tool would do
# it: no more events taken from node 1, those already received applied
# (unless its SQL thread was stopped: a test that wants them lost), then
# writable. Node 1, if it comes back, is read_only.
cluster_promote() {
  local state tries
  [[ $(cluster_topology) == replica ]] || die "promote-replica needs --mysql replica"
  [[ $(cl_role 2) == replica ]] || die "node 2 was promoted already"
  cl_pid 2 >/dev/null || die "node 2 is not running"
  cl_sql 2 "STOP SLAVE IO_THREAD" || die "cannot stop node 2's IO thread"
  for ((tries = 0; tries < 300; tries++)); do
    state=$(cl_sql 2 "SELECT COUNT(*) FROM information_schema.processlist
                      WHERE user = 'system user' AND state LIKE '%has read all relay log%'")
    [[ $(cl_sql 2 "SHOW SLAVE STATUS" | cut -f12) != Yes || $state == 1 ]] && break
    sleep 0.1
  done
  cl_sql 2 "STOP SLAVE; RESET SLAVE ALL; SET GLOBAL read_only = OFF" ||
    die "cannot promote node 2"
  echo primary >"$(cl_node_dir 2)/role"
  echo fenced >"$(cl_node_dir 1)/role"
  say "node 2 promoted: the primary now (gtid $(cl_sql 2 "SELECT @@gtid_current_pos"))"
}

cluster_status() {
  local n pid rc=0 state
  for ((n = 1; n <= $(cl_nodes); n++)); do
    if pid=$(cl_pid "$n"); then
      if cl_ping "$n"; then
        case $(cluster_topology) in
          galera) state=$(cl_sql "$n" "SHOW STATUS LIKE 'wsrep_local_state_comment'" | cut -f2) ;;
          *) state=$(cl_role "$n") ;;
        esac
        echo "mariadb node $n: running (pid $pid, port $(cl_port "$n" sql), $state)"
      else
        echo "mariadb node $n: running but not answering (pid $pid)"; rc=3
      fi
    else
      echo "mariadb node $n: stopped"; rc=3
    fi
  done
  return $rc
}

# Lines for the env file, after the single server's (these win): node 1
# is KT_MYSQL_PORT, KT_DB_URI_BASE lists every node, the primary first.
cluster_env() {
  local n ports="" sockets="" pidfiles="" hosts=""
  for ((n = 1; n <= $(cl_nodes); n++)); do
    ports+="${ports:+ }$(cl_port "$n" sql)"
    sockets+="${sockets:+ }$(cl_socket "$n")"
    pidfiles+="${pidfiles:+ }$(cl_node_dir "$n")/mariadbd.pid"
    hosts+="${hosts:+,}127.0.0.1:$(cl_port "$n" sql)"
  done
  printf 'export KT_MYSQL_TOPOLOGY=%q\n' "$(cluster_topology)"
  printf 'export KT_MYSQL_NODES=%q\n' "$(cl_nodes)"
  printf 'export KT_MYSQL_PORTS=%q\n' "$ports"
  printf 'export KT_MYSQL_SOCKETS=%q\n' "$sockets"
  printf 'export KT_MYSQL_PIDFILES=%q\n' "$pidfiles"
  printf 'export KT_MYSQL_PORT=%q\n' "$(cl_port 1 sql)"
  printf 'export KT_MYSQL_SOCKET=%q\n' "$(cl_socket 1)"
  printf 'export KT_MYSQL_DATADIR=%q\n' "$(cl_node_dir 1)/data"
  printf 'export KT_MYSQL_PIDFILE=%q\n' "$(cl_node_dir 1)/mariadbd.pid"
  printf 'export KT_MYSQL_ERRLOG=%q\n' "$(cl_node_dir 1)/error.log"
  printf 'export KT_MYSQL_CMD=%q\n' "$(cl_cmdline 1)"
  printf 'export KT_MYSQL_CLIENT=%q\n' "mariadb --no-defaults -h127.0.0.1 -P$(cl_port 1 sql) -ukt -pktpass"
  printf 'export KT_DB_URI_BASE=%q\n' "mysql://kt:ktpass@$hosts"
}

# cluster_reset: every node stopped, its data wiped, the topology started
# again as new (a test that promoted the replica leaves the next one a
# primary and its replica). The ports stay.
cluster_reset() {
  local topology n
  topology=$(cluster_topology)
  cluster_active || die "reset-mysql needs --mysql galera|replica"
  cluster_stop
  for ((n = 1; n <= $(cl_nodes); n++)); do
    rm -rf "$(cl_node_dir "$n")/data" "$(cl_node_dir "$n")/initialised" \
      "$(cl_node_dir "$n")/role" "$(cl_node_dir "$n")/replicating"
  done
  cluster_start "$topology"
}

cluster_clean() {
  rm -rf "$cl_dir" "$cl_sockdir"
  rm -f "$cl_topology_file"
}
