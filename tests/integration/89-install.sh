#!/usr/bin/env bash
# meson install puts the binary, the schemas, the unit, the example
# environment and the man page in place, and the installed ktally reports
# its own and its libraries' versions.
source "$(dirname "$0")/lib.sh"

meson install -C "$KT_BUILD" --no-rebuild --quiet --destdir "$WORK/root" > "$WORK/install.log" 2>&1 \
  || { cat "$WORK/install.log" >&2; fail "meson install failed"; }
prefix=$(meson introspect "$KT_BUILD" --buildoptions | grep -o '"name": "prefix", "value": "[^"]*"' | sed 's/.*"value": "//; s/"$//')
root=$WORK/root$prefix
for f in bin/ktally share/ktally/schema.sql share/ktally/idempotent.sql share/ktally/ledger.sql \
         share/ktally/version.sql share/ktally/migrations/002-names-bigint-utc.sql \
         share/man/man1/ktally.1 lib/systemd/system/ktally.service etc/ktally/ktally.env etc/ktally/ktally.conf; do
  [[ -s $root/$f ]] || fail "meson install did not install $f"
done
"$root/bin/ktally" --version > "$WORK/version"
for lib in ktally librdkafka "MariaDB Connector/C" GLib json-glib pcre2; do
  grep -q "^$lib [0-9]" "$WORK/version" || fail "--version does not name $lib: $(cat "$WORK/version")"
done
grep -q "RestartPreventExitStatus=2 4" "$root/lib/systemd/system/ktally.service" || fail "the unit restarts on exit 2 or 4"
note "$TEST_NAME: 10 files installed under $prefix; --version: $(tr '\n' ';' < "$WORK/version")"
