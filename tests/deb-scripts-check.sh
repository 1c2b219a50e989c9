#!/usr/bin/env bash
# The Debian package's maintainer scripts (scripts/deb/) decide what an
# upgrade restarts, without dpkg or systemd: each runs under $DPKG_ROOT (a
# scratch root with the migrations the old and the new ktally install)
# with the commands it calls (systemctl, deb-systemd-invoke, adduser...)
# replaced by stubs that record their words. What must hold:
#  - an upgrade whose ktally writes the same schema version restarts the
#    plain unit and every running instance of the template (ktally@NAME);
#  - one that brings a new schema version (or replaces an unknown one)
#    restarts nothing and tells the admin, on stderr, what migrates, how to
#    look first (init-db --dry-run) and how to restart;
#  - a first install restarts nothing; a removal stops the plain unit and
#    every running instance; without systemd nothing is called.
# Red before: an upgrade restarted ktally.service whatever the schema
# (into a migration at start, under a 90 s start timeout) and never an
# instance. No broker, no database.
set -euo pipefail

src=${1:-$(cd "$(dirname "$0")/.." && pwd)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: deb-scripts: $*" >&2; exit 1; }

mkdir -p "$work/bin"
for cmd in systemctl deb-systemd-invoke deb-systemd-helper adduser getent dpkg-statoverride; do
  cat > "$work/bin/$cmd" <<STUB
#!/bin/sh
echo "$cmd \$*" >> "$work/calls"
if [ "$cmd \$1" = "systemctl list-units" ]; then
  echo "ktally@logs.service loaded active running ktally job logs"
  echo "ktally@audit.service loaded active running ktally job audit"
fi
exit 0
STUB
  chmod +x "$work/bin/$cmd"
done

root=$work/root
scenario() {  # scenario OLD_MIGRATIONS NEW_MIGRATIONS [SYSTEMD]: a fresh root at the old version
  rm -rf "$root" "$work/calls" "$work/err"
  mkdir -p "$root/usr/share/ktally/migrations"
  [[ ${3:-systemd} == no-systemd ]] || mkdir -p "$root/run/systemd/system"
  local n
  for ((n = 2; n <= $1; n++)); do touch "$root/usr/share/ktally/migrations/$(printf %03d "$n")-m.sql"; done
  touch "$work/calls"
}
unpack() {  # unpack NEW_MIGRATIONS: the new package's files
  local n
  for ((n = 2; n <= $1; n++)); do touch "$root/usr/share/ktally/migrations/$(printf %03d "$n")-m.sql"; done
}
run() {  # run SCRIPT ARGS...: as dpkg would, its stderr into $work/err
  DPKG_ROOT=$root PATH="$work/bin:$PATH" sh "$src/scripts/deb/$1" "${@:2}" 2>> "$work/err" \
    || fail "$1 $* exited $?"
}
called() { grep -qxF "$1" "$work/calls"; }

# The same schema: the plain unit and both running instances restarted.
scenario 6
run preinst upgrade 0.1.0-1
unpack 6
run postinst configure 0.1.0-1
called "deb-systemd-invoke try-restart ktally.service ktally@logs.service ktally@audit.service" \
  || { cat "$work/calls" >&2; fail "an upgrade of the same schema did not restart every service"; }
[[ ! -s $work/err ]] || fail "an upgrade of the same schema said: $(cat "$work/err")"
[[ ! -e $root/run/ktally-upgrade.schema ]] || fail "postinst left its note behind"

# A new schema: nothing restarted, the admin told.
scenario 5
run preinst upgrade 0.1.0-1
[[ $(cat "$root/run/ktally-upgrade.schema") == 5 ]] || fail "preinst noted $(cat "$root/run/ktally-upgrade.schema"), not 5"
unpack 6
run postinst configure 0.1.0-1
! grep -q "try-restart" "$work/calls" || fail "an upgrade to a new schema restarted: $(grep try-restart "$work/calls")"
grep -q "writes schema version 6, the one it replaces 5" "$work/err" || fail "no word of the new schema: $(cat "$work/err")"
grep -q "init-db --dry-run" "$work/err" || fail "the notice does not say how to look first"
grep -q "systemctl restart ktally" "$work/err" || fail "the notice does not say how to restart"

# The old version unknown (preinst did not run, or /run was emptied): a change.
scenario 6
unpack 6
run postinst configure 0.1.0-1
! grep -q "try-restart" "$work/calls" || fail "an upgrade from an unknown schema restarted"
grep -q "the one it replaces unknown" "$work/err" || fail "no notice for an unknown old schema: $(cat "$work/err")"

# A first install: enabled, nothing started or restarted, nothing said.
scenario 0
unpack 6
run postinst configure
called "deb-systemd-helper --quiet was-enabled ktally.service" || fail "a first install did not enable the unit"
! grep -q "try-restart\|start" <(grep -v "^deb-systemd-helper" "$work/calls") || fail "a first install started something"
[[ ! -s $work/err ]] || fail "a first install said: $(cat "$work/err")"

# A removal stops the plain unit and every running instance.
scenario 6
run prerm remove
called "deb-systemd-invoke stop ktally.service ktally@logs.service ktally@audit.service" \
  || { cat "$work/calls" >&2; fail "a removal did not stop every service"; }

# Without systemd (a container): no systemctl, no restart, no failure.
scenario 6 6 no-systemd
run preinst upgrade 0.1.0-1
run postinst configure 0.1.0-1
run prerm remove
! grep -q "^systemctl\|^deb-systemd-invoke" "$work/calls" || fail "without systemd: $(cat "$work/calls")"

echo "# deb-scripts: same schema restarts ktally and its instances; a new or unknown one restarts nothing and says how; install, remove, no systemd"
