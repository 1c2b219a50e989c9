#!/usr/bin/env bash
# The Debian package, on this machine, as root: scripts/package builds it,
# dpkg -i installs it (the user ktally, the config readable by that user
# only, the unit enabled but not started, the template ktally@.service
# beside it), the installed ktally runs the
# demo's job as the unit would (its ExecStart, as ktally, the password as a
# systemd credential) and counts exactly, a reinstall keeps the edited
# config, and dpkg --purge leaves nothing behind but the user, which the
# test then removes: the machine ends as it was, also after a failure.
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

[[ $(id -u) == 0 ]] || fail "needs root: it installs and purges the ktally package (CI runs as root)"
if dpkg-query -W -f='${Status}' ktally 2> /dev/null | grep -qv 'not-installed'; then
  fail "a ktally package is on this machine: this test installs and purges its own, refusing"
fi
[[ ! -e /etc/ktally ]] || fail "/etc/ktally exists: this test would purge it, refusing"
had_user=no; getent passwd ktally > /dev/null && had_user=yes
had_group=no; getent group ktally > /dev/null && had_group=yes

snapshot() {  # what the package may touch: file names, the accounts, the overrides
  find /etc /var/lib/systemd -xdev 2> /dev/null | grep -v '^/etc/\(passwd\|group\|shadow\|gshadow\)-$' | sort
  md5sum /etc/passwd /etc/group /etc/shadow /etc/gshadow
  dpkg-statoverride --list | sort
}
snapshot > "$WORK/before"

restore() {  # leaves the machine as it was, whatever happened
  if dpkg-query -W -f='${Status}' ktally 2> /dev/null | grep -qv 'not-installed'; then
    dpkg --purge ktally > "$WORK/purge-on-exit.log" 2>&1 || cat "$WORK/purge-on-exit.log" >&2
  fi
  rm -rf /etc/ktally
  if [[ $had_user == no ]] && getent passwd ktally > /dev/null; then userdel ktally; fi
  if [[ $had_group == no ]] && getent group ktally > /dev/null; then groupdel ktally; fi
}
trap 'restore; kt_cleanup' EXIT
trap 'exit 1' INT TERM HUP

dpkg_do() {  # dpkg_do ARGS...: dpkg, which must succeed without a warning
  dpkg "$@" < /dev/null > "$WORK/dpkg.log" 2>&1 || { cat "$WORK/dpkg.log" >&2; fail "dpkg $* failed"; }
  ! grep -i 'warn' "$WORK/dpkg.log" >&2 || fail "dpkg $* warned"
}

"$KT_SRC/scripts/package" --quiet > "$WORK/package.log" 2>&1 \
  || { cat "$WORK/package.log" >&2; fail "scripts/package failed"; }
deb=$(tail -1 "$WORK/package.log")
[[ -f $deb ]] || fail "scripts/package printed no package: $(cat "$WORK/package.log")"
dpkg-deb -f "$deb" Depends > "$WORK/depends"
for lib in librdkafka1 libmariadb3 libglib2.0-0 libjson-glib-1.0-0 libpcre2-8-0 libmicrohttpd12 adduser; do
  grep -q "\b$lib\b" "$WORK/depends" || fail "Depends lacks $lib: $(cat "$WORK/depends")"
done
dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./conffiles > "$WORK/conffiles"
[[ $(cat "$WORK/conffiles") == $'/etc/ktally/ktally.conf\n/etc/ktally/ktally.env' ]] \
  || fail "conffiles: $(cat "$WORK/conffiles")"

# Installed: the binary, the user, the config readable by it, the unit
# enabled and not started.
dpkg_do -i "$deb"
/usr/bin/ktally --version > "$WORK/version" || fail "the installed ktally --version failed"
grep -q '^ktally 0' "$WORK/version" || fail "--version: $(cat "$WORK/version")"
IFS=: read -r _ _ uid _ _ home shell < <(getent passwd ktally) || fail "postinst created no user ktally"
((uid < 1000)) && [[ $home == /nonexistent && $shell == /usr/sbin/nologin ]] \
  || fail "ktally is not a system account: uid $uid, home $home, shell $shell"
[[ $(stat -c '%U:%G %a' /etc/ktally /etc/ktally/ktally.conf | tr '\n' ' ') == "root:ktally 750 root:ktally 640 " ]] \
  || fail "/etc/ktally: $(stat -c '%n %U:%G %a' /etc/ktally /etc/ktally/ktally.conf | tr '\n' ' ')"
unit=/usr/lib/systemd/system/ktally.service
[[ $(readlink -e /etc/systemd/system/multi-user.target.wants/ktally.service) == $(readlink -e "$unit") ]] \
  || fail "the unit is not enabled"
! pgrep -u ktally > /dev/null || fail "something runs as ktally after the install: the unit was started"
systemd-analyze security --offline=true --threshold=25 "$unit" > "$WORK/security" 2>&1 \
  || fail "the installed unit scores above 2.5: $(grep Overall "$WORK/security")"
# The template, beside it: installed, hardened the same, enabled for no instance.
template=/usr/lib/systemd/system/ktally@.service
[[ -f $template ]] || fail "the package lacks $template"
systemd-analyze security --offline=true --threshold=25 "$template" > "$WORK/security" 2>&1 \
  || fail "the installed template scores above 2.5: $(grep Overall "$WORK/security")"
! ls /etc/systemd/system/*.wants/ktally@* > /dev/null 2>&1 || fail "an instance of the template was enabled"
for f in ktally-dashboard.json ktally-alerts.yml; do
  [[ -s /usr/share/ktally/$f ]] || fail "the package lacks /usr/share/ktally/$f"
done
runuser -u ktally -- /usr/bin/ktally config --check --config /etc/ktally/ktally.conf > "$WORK/check" 2>&1 \
  || { cat "$WORK/check" >&2; fail "the shipped config does not pass config --check as the user ktally"; }

# The admin's part: the config and the password. ktally gets the password
# as the unit gives it: a copy that systemd's LoadCredential= owns to the
# service's user, mode 0400, under $CREDENTIALS_DIRECTORY (%d).
topic=$(kt_new_topic pkg 4)
db=$(kt_db_name "$(kt_new_db pkg)")
cat > /etc/ktally/ktally.conf <<CONF
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
install -m 0600 /dev/null /etc/ktally/db-password
echo "$KT_MYSQL_PASSWORD" > /etc/ktally/db-password
chmod 0711 "$WORK"
install -d -o ktally -g ktally -m 0500 "$WORK/credentials"
install -o ktally -g ktally -m 0400 /etc/ktally/db-password "$WORK/credentials/db-password"

# A reinstall keeps the edited config and its permissions.
dpkg_do -i "$deb"
grep -q "^topic = $topic\$" /etc/ktally/ktally.conf || fail "a reinstall replaced the edited config"
[[ $(stat -c '%U:%G %a' /etc/ktally/ktally.conf) == "root:ktally 640" ]] || fail "a reinstall changed the config's owner or mode"

# The demo's job, run by the installed binary with the unit's own command
# line (continuation lines joined, %d the credentials, no KTALLY_OPTIONS),
# as ktally, in an environment as bare as systemd's.
exec_start=$(sed -n '/^ExecStart=/,/[^\\]$/p' "$unit" | sed 's/\\$//' | tr -d '\n' | sed 's/^ExecStart=//')
exec_start=${exec_start//%d/$WORK/credentials}
exec_start=${exec_start//\$KTALLY_OPTIONS/}
[[ $exec_start == "/usr/bin/ktally run --config /etc/ktally/ktally.conf "* ]] || fail "the unit runs: $exec_start"
kcat -b "$KT_BROKERS" -P -t "$topic" -l -X sticky.partitioning.linger.ms=0 "$KT_SRC/samples/demo.log"
# shellcheck disable=SC2086  # the unit's words, split as systemd splits them (no quotes in it)
(cd / && env -i PATH=/usr/bin:/bin LANG=C.UTF-8 setpriv --reuid=ktally --regid=ktally --init-groups \
  $exec_start) > "$WORK/run.log" 2>&1 || { cat "$WORK/run.log" >&2; fail "the installed ktally failed the demo's job"; }
kt_check_counts "$db" "$KT_SRC/samples/demo-expected.tsv"

# remove keeps the config, purge takes everything but the user.
dpkg_do --remove ktally
[[ ! -e /usr/bin/ktally && ! -e $unit && -f /etc/ktally/ktally.conf ]] || fail "dpkg --remove: binary, unit or config wrong"
dpkg_do --purge ktally
[[ ! -e /etc/ktally ]] || fail "dpkg --purge left $(find /etc/ktally | tr '\n' ' ')"
dpkg-deb -c "$deb" | awk '{ print substr($6, 2) }' | grep -v '/$' > "$WORK/files"
while read -r f; do [[ ! -e $f ]] || fail "dpkg --purge left $f"; done < "$WORK/files"
[[ ! -e /usr/share/ktally && ! -e /usr/share/doc/ktally ]] || fail "dpkg --purge left a directory in /usr/share"
getent passwd ktally > /dev/null || fail "dpkg --purge removed the user ktally (it keeps it, as documented)"
if [[ $had_user == no ]]; then userdel ktally; fi
if [[ $had_group == no ]] && getent group ktally > /dev/null; then groupdel ktally; fi
snapshot > "$WORK/after"
diff "$WORK/before" "$WORK/after" >&2 || fail "the machine differs after the purge (above: < before, > after)"

note "$TEST_NAME: $(basename "$deb") ($(du -k "$deb" | cut -f1) kB) installed, demo exact as user ktally, config kept on reinstall, purged clean"
