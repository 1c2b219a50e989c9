#!/usr/bin/env bash
# The hardened unit runs ktally for real: a throwaway systemd 252 (PID 1 of
# its own PID, mount, UTS and cgroup namespaces, on an overlay of this
# machine's root whose writes land in a tmpfs) installs the package, starts
# ktally.service with the unit's own sandbox (seccomp filter, user
# namespace, credentials, read-only system) and the demo's job, and exits
# when ktally does. The counts must be exact and the exit 0: a syscall,
# socket family or path the hardening denies would show here. The host
# keeps nothing: the overlay and every mount die with the namespaces, the
# one cgroup made for them is removed.
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

[[ $(id -u) == 0 ]] || fail "needs root: it runs systemd in namespaces (CI runs as root)"
grep -qw overlay /proc/filesystems || fail "no overlayfs in this kernel: cannot build the throwaway root"
for dir in /etc /usr /var; do  # the overlay's lower layer is / alone
  [[ $(findmnt -n -o TARGET -T "$dir") == / ]] || fail "$dir is a file system of its own: the throwaway root would lack it"
done
cgroot=$(findmnt -n -o TARGET -t cgroup2 | head -1)
[[ -n $cgroot ]] || fail "no cgroup2 hierarchy mounted: systemd needs one"

"$KT_SRC/scripts/package" --quiet > "$WORK/package.log" 2>&1 \
  || { cat "$WORK/package.log" >&2; fail "scripts/package failed"; }
deb=$(tail -1 "$WORK/package.log")

topic=$(kt_new_topic sandbox 4)
db=$(kt_db_name "$(kt_new_db sandbox)")
kcat -b "$KT_BROKERS" -P -t "$topic" -l -X sticky.partitioning.linger.ms=0 "$KT_SRC/samples/demo.log"

# What goes into the throwaway root on top of the package: the admin's
# config and password, and a drop-in that only makes the test possible
# (no boot dependencies; systemd exits with ktally's status; the output to
# a directory the host sees). The sandbox is the unit's, untouched.
mkdir -p "$WORK/add/etc/ktally" "$WORK/add/etc/systemd/system/ktally.service.d" "$WORK/out"
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

# PID 1 of the new namespaces: the overlay, the API file systems, the
# package, then systemd itself.
cat > "$WORK/init.sh" <<'INIT'
set -euo pipefail
work=$1 deb=$2
mount --make-rprivate /
mount -t tmpfs -o mode=0700 tmpfs "$work/layers"
mkdir "$work/layers/upper" "$work/layers/work" "$work/layers/root"
root=$work/layers/root
mount -t overlay overlay -o "lowerdir=/,upperdir=$work/layers/upper,workdir=$work/layers/work" "$root"
mount -t proc proc "$root/proc"
mount --rbind /sys "$root/sys"
umount -R "$root/sys/fs/cgroup"
mount -t cgroup2 cgroup2 "$root/sys/fs/cgroup"
mount --rbind /dev "$root/dev"
# systemd as PID 1 logs to /dev/console: the pty that script(1) records,
# never the host's console.
mount --bind "$(tty)" "$root/dev/console"
mount -t tmpfs -o mode=0755 tmpfs "$root/run"
mount -t tmpfs -o mode=1777 tmpfs "$root/tmp"
mkdir -p "$root/var/log/kt-test"
mount --bind "$work/out" "$root/var/log/kt-test"
cp "$deb" "$root/tmp/ktally.deb"
chroot "$root" dpkg -i /tmp/ktally.deb > "$work/out/dpkg.log" 2>&1
cp -r "$work/add/." "$root/"
chmod 0600 "$root/etc/ktally/db-password"
mkdir "$root/.oldroot"
cd "$root"
pivot_root . .oldroot
umount -l /.oldroot
# Shared, as on a booted machine (systemd does not do it in a container):
# LoadCredential= mounts the credentials in a child's namespace, and the
# mount must propagate. Peers only inside these namespaces.
mount --make-rshared /
exec env -i container=ktally-test /lib/systemd/systemd --system --unit=kt-test.target \
  --log-target=console --log-level=notice --show-status=no
INIT

mkdir "$WORK/layers"
cg=$cgroot/ktally-test-$RUN_ID
mkdir "$cg"
rmdir_cgroup() { [[ ! -d $cg ]] || find "$cg" -depth -type d -exec rmdir {} + 2> /dev/null; }
remove_cgroup() { kt_wait_for 10 rmdir_cgroup || echo "cgroup $cg left behind" >&2; }  # once its processes are reaped
trap 'remove_cgroup; kt_cleanup' EXIT
trap 'exit 1' INT TERM HUP
rc=0
(echo "$BASHPID" > "$cg/cgroup.procs"
 exec script -qefc "timeout 90 unshare --pid --kill-child --mount --uts --cgroup --propagation private \
   bash $WORK/init.sh $WORK $deb" "$WORK/systemd.log") < /dev/null > /dev/null 2>&1 || rc=$?
if ((rc != 0)); then
  for f in "$WORK/out/dpkg.log" "$WORK/systemd.log" "$WORK/out/ktally.log"; do
    [[ ! -s $f ]] || { echo "== $f" >&2; tail -30 "$f" >&2; }
  done
  fail "ktally.service under systemd: exit $rc (124: no exit within 90 s)"
fi
grep -q "Setting up ktally" "$WORK/out/dpkg.log" || fail "the package did not install in the throwaway root"
kt_check_counts "$db" "$KT_SRC/samples/demo-expected.tsv"
remove_cgroup
[[ ! -d $cg ]] || fail "cgroup $cg left behind"
note "$TEST_NAME: ktally.service ran the demo's job to the exact counts under systemd $(systemctl --version | awk 'NR == 1 { print $2 }') with its full sandbox"
