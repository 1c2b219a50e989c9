#!/usr/bin/env bash
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
# Many jobs per host: the template unit ktally@.service runs two instances
# side by side under a throwaway systemd (sandbox.sh), with the unit's own
# sandbox: ktally@alpha reads /etc/ktally/alpha.conf and its credential
# alpha.db-password, ktally@beta beta.conf and beta.db-password. Each
# instance has its own MySQL user, whose password is only in its own
# credential file (a unit handing the wrong one would be refused), its own
# topic and database, and its own HTTP port from its config. Each counts
# its own topic exactly, its /metrics (scraped from the host) carries its
# own job and records only, and a clean stop of both (systemd stopping
# them with SIGTERM) exits 0, each log ending with its "stopped" record. Red before: there was no template unit.
# The mock broker: the units are tested, not Kafka.
source "$(dirname "$0")/lib.sh"
source "$KT_SRC/tests/integration/sandbox.sh"

kt_sandbox_check
deb=$(kt_sandbox_package)

names=(alpha beta)
declare -A topic db user port lines
read -r port[alpha] port[beta] < <(/usr/bin/python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*(x.getsockname()[1] for x in s))')
lines[alpha]=3000 lines[beta]=5000
drop_users() {
  local n
  for n in "${names[@]}"; do kt_sql mysql "DROP USER IF EXISTS 'kt_${n}_$RUN_ID'@'%'" 2> /dev/null || true; done
}
trap 'drop_users; kt_cleanup' EXIT

mkdir -p "$WORK/add/etc/ktally" "$WORK/add/etc/systemd/system/ktally@.service.d"
seed=$KT_SEED
for n in "${names[@]}"; do
  topic[$n]=$(kt_new_topic "inst_$n" 3)
  db[$n]=$(kt_db_name "$(kt_new_db "inst_$n")")
  user[$n]=kt_${n}_$RUN_ID
  kt_sql mysql "CREATE USER '${user[$n]}'@'%' IDENTIFIED BY 'pw_${n}_$RUN_ID';
    GRANT ALL ON \`${db[$n]}\`.* TO '${user[$n]}'@'%'"
  kt_gen "${topic[$n]}" --lines "${lines[$n]}" --seed $((seed++)) --truth "$WORK/truth.$n" > /dev/null
  cat > "$WORK/add/etc/ktally/$n.conf" <<CONF
[kafka]
brokers = $KT_BROKERS
topic = ${topic[$n]}
[mysql]
host = $KT_MYSQL_HOST
port = $KT_MYSQL_PORT
user = ${user[$n]}
database = ${db[$n]}
[batch]
job = $n
interval = 500ms
[http]
http = 127.0.0.1:${port[$n]}
[log]
log-format = json
CONF
  echo "pw_${n}_$RUN_ID" > "$WORK/add/etc/ktally/$n.db-password"
done
# Only what makes the test possible: no boot dependencies, no restarts,
# each instance's output to a file the host sees; a path unit that ends
# the manager cleanly (every unit stopped first) once the host says so.
cat > "$WORK/add/etc/systemd/system/ktally@.service.d/test.conf" <<'UNIT'
[Unit]
DefaultDependencies=no
[Service]
Restart=no
StandardOutput=append:/var/log/kt-test/%i.log
StandardError=inherit
UNIT
cat > "$WORK/add/etc/systemd/system/kt-test.target" <<'UNIT'
[Unit]
DefaultDependencies=no
AllowIsolate=yes
Wants=ktally@alpha.service ktally@beta.service kt-stop.path
UNIT
cat > "$WORK/add/etc/systemd/system/kt-stop.path" <<'UNIT'
[Unit]
DefaultDependencies=no
[Path]
PathExists=/var/log/kt-test/stop
UNIT
cat > "$WORK/add/etc/systemd/system/kt-stop.service" <<'UNIT'
[Unit]
DefaultDependencies=no
SuccessAction=exit
[Service]
Type=oneshot
ExecStart=/bin/true
UNIT

kt_sandbox_start "$deb" kt-test.target 150
trap 'drop_users; kt_sandbox_remove_cgroup; kt_cleanup' EXIT

# Each instance from the host: its port, its job, its records, its counts.
scrape() { curl -sf --max-time 5 "http://127.0.0.1:${port[$1]}/metrics" > "$WORK/metrics.$1"; }
done_counting() {  # done_counting NAME: its /metrics says every record is in
  scrape "$1" && [[ $(awk -v s="ktally_records_total{ktally_job=\"$1\"}" '$1 == s { print $2 }' "$WORK/metrics.$1") == "${lines[$1]}" ]]
}
for n in "${names[@]}"; do
  kill -0 "$KT_SANDBOX_PID" 2> /dev/null || { kt_sandbox_logs "$WORK/out/$n.log"; fail "systemd ended before ktally@$n counted"; }
  kt_wait_for 90 done_counting "$n" \
    || { kt_sandbox_logs "$WORK/out/alpha.log" "$WORK/out/beta.log"; fail "ktally@$n on port ${port[$n]} never reported its ${lines[$n]} records"; }
  other=alpha; [[ $n == alpha ]] && other=beta
  if grep -q "ktally_job=\"$other\"" "$WORK/metrics.$n"; then fail "ktally@$n's /metrics shows job $other"; fi
  kt_check_counts "${db[$n]}" "$WORK/truth.$n"
  [[ $(kt_sql "${db[$n]}" "SELECT COUNT(DISTINCT job) FROM kafka_offset") == 1 ]] || fail "${db[$n]} holds another job's offsets"
done

# The host says stop: systemd stops both (SIGTERM) and exits.
touch "$WORK/out/stop"
rc=0
kt_sandbox_wait || rc=$?
((rc == 0)) || { kt_sandbox_logs "$WORK/out/alpha.log" "$WORK/out/beta.log"; fail "the manager ended with $rc (124: no exit within 150 s)"; }
grep -q "Setting up ktally" "$WORK/out/dpkg.log" || fail "the package did not install in the throwaway root"
for n in "${names[@]}"; do
  kt_log_has start "$WORK/out/$n.log" || fail "ktally@$n logged no start"
  if kt_log_has exit "$WORK/out/$n.log"; then fail "ktally@$n ended with an error: $(grep '"exit"' "$WORK/out/$n.log")"; fi
  kt_log_match '.event == "signal"' "$WORK/out/$n.log" || fail "ktally@$n was not stopped by a signal"
  tail -1 "$WORK/out/$n.log" | jq -e --arg n "$n" --argjson r "${lines[$n]}" \
    '.event == "stopped" and .job == $n and .records == $r' > /dev/null \
    || fail "ktally@$n's log does not end with its stopped record of ${lines[$n]} records: $(tail -1 "$WORK/out/$n.log")"
  # Every instance counted its own: the others' counts are not in its database.
  kt_check_counts "${db[$n]}" "$WORK/truth.$n"
done
kt_sandbox_remove_cgroup
[[ ! -d $KT_SANDBOX_CG ]] || fail "cgroup $KT_SANDBOX_CG left behind"
note "$TEST_NAME: ktally@alpha (port ${port[alpha]}, ${lines[alpha]} records) and ktally@beta (port ${port[beta]}, ${lines[beta]}) exact under systemd with their own config, credential, user and metrics; stopped cleanly"
