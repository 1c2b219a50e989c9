#!/usr/bin/env bash
# broker: any — no Kafka at all: this is about the services' Galera nodes
# Galera: a node killed while another process has since taken its
# state-transfer port (IST) rejoins when restarted: `scripts/services
# restart-mysql N` gives it a free port for the transfer. A node listens on
# its IST and SST ports only while it joins, so on a shared machine
# another program (seen: another checkout's Kafka broker) may take one
# between the cluster's start and a restart; the history checker's Galera
# histories restart nodes all the time.
#
# Red before that: the restart failed ("Failed to open IST listener ...
# Address already in use", then "Will never receive state. Need to
# abort") and the node stayed down, the cluster one node short. Needs
# `scripts/services start --mysql galera`.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/faults.sh"
source "$(dirname "$0")/ha.sh"

ha_need galera
t0=$SECONDS
ports_file=$KT_SERVICES_DIR/mysql-cluster/node2/ports
[[ -s $ports_file ]] || fail "no ports file for node 2 at $ports_file"
read -r -a ports < "$ports_file"
ist=${ports[2]}

ha_kill 2
# Another process on node 2's IST port while the node is down.
python3 -c '
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # past TIME_WAIT of the last transfer
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen()
print("ready", flush=True)
time.sleep(300)' "$ist" > "$WORK/squatter.out" 2>&1 &
squatter=$!
# Killed on exit with the test's other children (a kill of our own in the
# EXIT trap fails under set -e once bash has reaped it: red at random).
KT_CHILDREN+=("$squatter")
kt_wait_for 10 grep -q ready "$WORK/squatter.out" || fail "cannot listen on node 2's IST port $ist: $(cat "$WORK/squatter.out")"

rejoin=$(ha_restart 2)
kt_wait_for 60 ha_ready 2 || fail "node 2 is not Synced after its restart"
read -r -a now < "$ports_file"
[[ ${now[2]} != "$ist" ]] || fail "node 2 kept its taken IST port $ist"
kill "$squatter" 2> /dev/null
note "$TEST_NAME: node 2 rejoined in $rejoin ms with its IST port $ist taken (now ${now[2]}), $((SECONDS - t0)) s"
