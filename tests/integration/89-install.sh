#!/usr/bin/env bash
# meson install puts the binary, the schemas, the unit, the config and the
# unit's environment file and the man page in place; the unit names this
# installation's binary and config; a second install keeps an edited config
# (the new sample lands in share/ktally/); and the installed ktally reports
# its own and its libraries' versions.
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

install_to() {  # install_to DESTDIR
  meson install -C "$KT_BUILD" --no-rebuild --quiet --destdir "$1" > "$WORK/install.log" 2>&1 \
    || { cat "$WORK/install.log" >&2; fail "meson install failed"; }
}
install_to "$WORK/root"
read -r prefix bindir etc < <(meson introspect "$KT_BUILD" --buildoptions | /usr/bin/python3 -c '
import json, os, sys
o = {x["name"]: x["value"] for x in json.load(sys.stdin)}
print(o["prefix"], *(os.path.join(o["prefix"], o[d]) for d in ("bindir", "sysconfdir")))')
root=$WORK/root
unit=$root$prefix/lib/systemd/system/ktally.service
for f in "$bindir/ktally" "$prefix/share/ktally/common.sql" "$prefix/share/ktally/counts.sql" "$prefix/share/ktally/idempotent.sql" \
         "$prefix/share/ktally/ledger.sql" "$prefix/share/ktally/version.sql" "$prefix/share/ktally/dead-letters.sql" \
         "$prefix/share/ktally/migrations/002-names-bigint-utc.sql" \
         "$prefix/share/ktally/migrations/003-job-identity.sql" "$prefix/share/man/man1/ktally.1" "$prefix/share/man/man1/ktally-run.1" "$prefix/share/man/man5/ktally.conf.5" \
         "$prefix/lib/systemd/system/ktally.service" "$etc/ktally/ktally.env" "$etc/ktally/ktally.conf" \
         "$prefix/share/ktally/ktally.conf" "$prefix/share/ktally/ktally.env"; do
  [[ -s $root$f ]] || fail "meson install did not install $f"
done
"$root$bindir/ktally" --version > "$WORK/version"
for lib in ktally librdkafka "MariaDB Connector/C" GLib json-glib pcre2; do
  grep -q "^$lib [0-9]" "$WORK/version" || fail "--version does not name $lib: $(cat "$WORK/version")"
done
grep -q "RestartPreventExitStatus=2 4" "$unit" || fail "the unit restarts on exit 2 or 4"

# The unit runs what this install put in place, nothing from elsewhere.
grep -qxF "ExecStart=$bindir/ktally run --config $etc/ktally/ktally.conf \\" "$unit" \
  || fail "the unit does not run $bindir/ktally --config $etc/ktally/ktally.conf: $(grep -A1 ^ExecStart "$unit")"
grep -qxF "EnvironmentFile=-$etc/ktally/ktally.env" "$unit" || fail "the unit reads another environment file"
[[ $(stat -c %a "$root$etc/ktally/ktally.conf") == 640 ]] || fail "the config (it may hold a SASL password) is not 0640"

# An operator's edit survives the next install.
echo "# edited by the operator" >> "$root$etc/ktally/ktally.conf"
install_to "$WORK/root"
grep -q "^# edited by the operator" "$root$etc/ktally/ktally.conf" || fail "a second meson install replaced the edited config"
cmp -s "$root$prefix/share/ktally/ktally.conf" "$KT_SRC/samples/ktally.conf" || fail "share/ktally/ktally.conf is not the sample"
note "$TEST_NAME: 10 files installed under $prefix, config $etc/ktally kept on reinstall; --version: $(tr '\n' ';' < "$WORK/version")"
