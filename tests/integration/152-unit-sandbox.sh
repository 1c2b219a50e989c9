#!/usr/bin/env bash
# The hardened unit runs ktally for real: a throwaway systemd 252 (PID 1 of
# its own PID, mount, UTS and cgroup namespaces, on an overlay of this
# machine's root whose writes land in a tmpfs) installs the package, starts
# ktally.service with the unit's own sandbox (seccomp filter, user
# namespace, credentials, read-only system) and the demo's job, and exits
# when ktally does. The counts must be exact and the exit 0: a syscall,
# socket family or path the hardening denies would show here. The host
# keeps nothing (sandbox.sh). The mock broker: the unit's sandbox is what
# is tested, not Kafka.
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"
source "$KT_SRC/tests/integration/sandbox.sh"

kt_sandbox_check
deb=$(kt_sandbox_package)

topic=$(kt_new_topic sandbox 4)
db=$(kt_db_name "$(kt_new_db sandbox)")
kcat -b "$KT_BROKERS" -P -t "$topic" -l -X sticky.partitioning.linger.ms=0 "$KT_SRC/samples/demo.log"

# What goes into the throwaway root on top of the package: the admin's
# config and password, and a drop-in that only makes the test possible
# (no boot dependencies; systemd exits with ktally's status; the output to
# a directory the host sees). The sandbox is the unit's, untouched.
mkdir -p "$WORK/add/etc/ktally" "$WORK/add/etc/systemd/system/ktally.service.d"
cat > "$WORK/add/etc/ktally/ktally.conf" <<CONF
[kafka]
brokers = $KT_BROKERS
topic = $topic
[mysql]
host = $KT_MYSQL_HOST
port = $KT_MYSQL_PORT
user = $KT_MYSQL_USER
database = $db
[batch]
interval = 1
exit-when-idle = true
CONF
echo "$KT_MYSQL_PASSWORD" > "$WORK/add/etc/ktally/db-password"
cat > "$WORK/add/etc/systemd/system/ktally.service.d/test.conf" <<'UNIT'
[Unit]
DefaultDependencies=no
SuccessAction=exit-force
FailureAction=exit-force
[Service]
Restart=no
StandardOutput=append:/var/log/kt-test/ktally.log
StandardError=inherit
UNIT
cat > "$WORK/add/etc/systemd/system/kt-test.target" <<'UNIT'
[Unit]
DefaultDependencies=no
AllowIsolate=yes
Wants=ktally.service
UNIT

rc=0
kt_sandbox_start "$deb" kt-test.target 90
kt_sandbox_wait || rc=$?
if ((rc != 0)); then
  kt_sandbox_logs "$WORK/out/ktally.log"
  fail "ktally.service under systemd: exit $rc (124: no exit within 90 s)"
fi
grep -q "Setting up ktally" "$WORK/out/dpkg.log" || fail "the package did not install in the throwaway root"
kt_check_counts "$db" "$KT_SRC/samples/demo-expected.tsv"
kt_sandbox_remove_cgroup
[[ ! -d $KT_SANDBOX_CG ]] || fail "cgroup $KT_SANDBOX_CG left behind"
note "$TEST_NAME: ktally.service ran the demo's job to the exact counts under systemd $(systemctl --version | awk 'NR == 1 { print $2 }') with its full sandbox"
