#!/usr/bin/env bash
# The generated unit is hardened: `systemd-analyze security --offline=true`
# (systemd 252 reads the file itself: no systemd as PID 1, no installed
# binary needed) scores it 2.5 or below, and the hardening leaves ktally
# what it needs: its sockets, its exit-status policy, its config and
# credential, and no MemoryDenyWriteExecute= (pcre2's JIT).
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

unit=$KT_BUILD/ktally.service
[[ -s $unit ]] || fail "meson generated no $unit"
command -v systemd-analyze > /dev/null || fail "no systemd-analyze (Debian package systemd: scripts/setup)"
! grep -n '@[A-Z_]*@' "$unit" >&2 || fail "placeholders left in the unit"

rc=0
systemd-analyze security --offline=true --threshold=25 "$unit" > "$WORK/security" 2>&1 || rc=$?
score=$(sed -n 's/.*Overall exposure level for ktally.service: \([0-9.]*\).*/\1/p' "$WORK/security")
[[ -n $score ]] || { cat "$WORK/security" >&2; fail "systemd-analyze security gave no score"; }
if ((rc != 0)); then
  grep '✗' "$WORK/security" >&2
  fail "the unit's exposure is $score, above 2.5 (the settings that cost are above)"
fi

want() {  # want LINE: the unit has this exact line
  grep -qxF "$1" "$unit" || fail "the unit lacks '$1'"
}
want "RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX"
want "RestartPreventExitStatus=2 4 243"
want "KillSignal=SIGTERM"
want "User=ktally"
want "CapabilityBoundingSet="
want "UMask=0077"
! grep -q '^MemoryDenyWriteExecute=yes' "$unit" || fail "MemoryDenyWriteExecute=yes breaks pcre2's JIT"
# This build's paths (prefix /usr/local: /usr/local/bin, /usr/local/etc).
read -r bindir etc < <(meson introspect "$KT_BUILD" --buildoptions | /usr/bin/python3 -c '
import json, os, sys
o = {x["name"]: x["value"] for x in json.load(sys.stdin)}
print(*(os.path.join(o["prefix"], o[d]) for d in ("bindir", "sysconfdir")))')
want "LoadCredential=db-password:$etc/ktally/db-password"
want "ExecStart=$bindir/ktally run --config $etc/ktally/ktally.conf \\"
grep -q -- "--db-password-file %d/db-password" "$unit" || fail "ExecStart does not pass the credential"

note "$TEST_NAME: systemd-analyze security --offline: $score (at most 2.5)"
