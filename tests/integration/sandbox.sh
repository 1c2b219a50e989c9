# tests/integration/sandbox.sh - a throwaway systemd for the unit tests
# (152-unit-sandbox, 153-unit-instances), sourced after lib.sh.
#
# systemd 252 runs as PID 1 of its own PID, mount, UTS and cgroup
# namespaces, on an overlay of this machine's root whose writes land in a
# tmpfs, with the Debian package installed in it and $WORK/add/ copied
# over it (the admin's files, drop-ins that make the test possible). The
# network is the host's: the units reach the test's broker and MariaDB on
# 127.0.0.1, and the test reaches their ports. $WORK/out/ is
# /var/log/kt-test/ inside. The host keeps nothing: the overlay and every
# mount die with the namespaces, the one cgroup made for them is removed.

kt_sandbox_check() {  # what the sandbox needs of this machine; sets KT_CGROOT
  [[ $(id -u) == 0 ]] || fail "needs root: it runs systemd in namespaces (CI runs as root)"
  grep -qw overlay /proc/filesystems || fail "no overlayfs in this kernel: cannot build the throwaway root"
  local dir
  for dir in /etc /usr /var; do  # the overlay's lower layer is / alone
    [[ $(findmnt -n -o TARGET -T "$dir") == / ]] || fail "$dir is a file system of its own: the throwaway root would lack it"
  done
  KT_CGROOT=$(findmnt -n -o TARGET -t cgroup2 | head -1)
  [[ -n $KT_CGROOT ]] || fail "no cgroup2 hierarchy mounted: systemd needs one"
  mkdir -p "$WORK/add" "$WORK/out" "$WORK/layers"
}

kt_sandbox_package() {  # builds the package; prints its path
  "$KT_SRC/scripts/package" --quiet > "$WORK/package.log" 2>&1 \
    || { cat "$WORK/package.log" >&2; fail "scripts/package failed"; }
  tail -1 "$WORK/package.log"
}

# PID 1 of the new namespaces: the overlay, the API file systems, the
# package, then systemd itself, isolating TARGET.
kt_sandbox_init() {  # kt_sandbox_init: writes $WORK/init.sh
  cat > "$WORK/init.sh" <<'INIT'
set -euo pipefail
work=$1 deb=$2 target=$3
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
find "$root/etc/ktally" -name '*db-password' -exec chmod 0600 {} +
mkdir "$root/.oldroot"
cd "$root"
pivot_root . .oldroot
umount -l /.oldroot
# Shared, as on a booted machine (systemd does not do it in a container):
# LoadCredential= mounts the credentials in a child's namespace, and the
# mount must propagate. Peers only inside these namespaces.
mount --make-rshared /
exec env -i container=ktally-test /lib/systemd/systemd --system --unit="$target" \
  --log-target=console --log-level=notice --show-status=no
INIT
}

kt_sandbox_start() {  # kt_sandbox_start DEB TARGET SECONDS: systemd in the background; sets KT_SANDBOX_PID
  kt_sandbox_init
  KT_SANDBOX_CG=$KT_CGROOT/ktally-test-$RUN_ID
  mkdir "$KT_SANDBOX_CG"
  trap 'kt_sandbox_remove_cgroup; kt_cleanup' EXIT
  trap 'exit 1' INT TERM HUP
  (echo "$BASHPID" > "$KT_SANDBOX_CG/cgroup.procs"
   exec script -qefc "timeout $3 unshare --pid --kill-child --mount --uts --cgroup --propagation private \
     bash $WORK/init.sh $WORK $1 $2" "$WORK/systemd.log") < /dev/null > /dev/null 2>&1 &
  KT_SANDBOX_PID=$!
}

kt_sandbox_wait() {  # kt_sandbox_wait: systemd's exit status (124: the time ran out)
  local rc=0
  wait "$KT_SANDBOX_PID" || rc=$?
  return "$rc"
}

kt_sandbox_logs() {  # kt_sandbox_logs FILE...: the ends of the sandbox's logs and FILEs, on stderr
  local f
  for f in "$WORK/out/dpkg.log" "$WORK/systemd.log" "$@"; do
    [[ ! -s $f ]] || { echo "== $f" >&2; tail -30 "$f" >&2; }
  done
}

kt_sandbox_rmdir_cgroup() { [[ ! -d $KT_SANDBOX_CG ]] || find "$KT_SANDBOX_CG" -depth -type d -exec rmdir {} + 2> /dev/null; }
kt_sandbox_remove_cgroup() {  # once its processes are reaped
  [[ -n ${KT_SANDBOX_CG:-} ]] || return 0
  kt_wait_for 10 kt_sandbox_rmdir_cgroup || echo "cgroup $KT_SANDBOX_CG left behind" >&2
}
