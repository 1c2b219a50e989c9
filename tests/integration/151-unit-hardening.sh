#!/usr/bin/env bash
# The generated units are hardened: `systemd-analyze security --offline=true`
# (systemd 252 reads the file itself: no systemd as PID 1, no installed
# binary needed) scores each 2.5 or below, the plain unit (ktally.service,
# one job per host) and the template (ktally@.service, an instance per
# job), and the hardening leaves ktally what it needs: its sockets, its
# exit-status policy, its config and credential (the template's are the
# instance's: NAME.conf, NAME.env, NAME.db-password), and no
# MemoryDenyWriteExecute= (pcre2's JIT). Both come from one file, so their
# hardening is the same line for line. No broker: nothing runs.
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

command -v systemd-analyze > /dev/null || fail "no systemd-analyze (Debian package systemd: scripts/setup)"
# This build's paths (prefix /usr/local: /usr/local/bin, /usr/local/etc).
read -r bindir etc < <(meson introspect "$KT_BUILD" --buildoptions | /usr/bin/python3 -c '
import json, os, sys
o = {x["name"]: x["value"] for x in json.load(sys.stdin)}
print(*(os.path.join(o["prefix"], o[d]) for d in ("bindir", "sysconfdir")))')

scores=()
check_unit() {  # check_unit FILE CONF ENV PASSWORD: one unit, its instance's files named so
  local unit=$KT_BUILD/$1 conf=$2 env=$3 password=$4 rc=0 score
  want() { grep -qxF "$1" "$unit" || fail "$(basename "$unit") lacks '$1'"; }
  [[ -s $unit ]] || fail "meson generated no $unit"
  ! grep -n '@[A-Z_]*@' "$unit" >&2 || fail "placeholders left in $unit"
  systemd-analyze security --offline=true --threshold=25 "$unit" > "$WORK/security" 2>&1 || rc=$?
  score=$(sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p' "$WORK/security")
  [[ -n $score ]] || { cat "$WORK/security" >&2; fail "systemd-analyze security gave no score for $1"; }
  if ((rc != 0)); then
    grep '✗' "$WORK/security" >&2
    fail "$1's exposure is $score, above 2.5 (the settings that cost are above)"
  fi
  scores+=("$1 $score")
  want "RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX"
  want "RestartPreventExitStatus=2 4 243"
  want "KillSignal=SIGTERM"
  want "User=ktally"
  want "CapabilityBoundingSet="
  want "UMask=0077"
  want "Type=notify"
  ! grep -q '^MemoryDenyWriteExecute=yes' "$unit" || fail "MemoryDenyWriteExecute=yes breaks pcre2's JIT"
  want "EnvironmentFile=-$etc/ktally/$env"
  want "LoadCredential=db-password:$etc/ktally/$password"
  want "ExecStart=$bindir/ktally run --config $etc/ktally/$conf \\"
  grep -q -- "--db-password-file %d/db-password" "$unit" || fail "$1's ExecStart does not pass the credential"
}
check_unit ktally.service ktally.conf ktally.env db-password
check_unit ktally@.service %i.conf %i.env %i.db-password
# One file, two units: the same settings but those that name the instance.
diff <(grep -v '^#' "$KT_BUILD/ktally.service" | grep -v '%i\|^Description=\|^EnvironmentFile=\|^LoadCredential=\|^ExecStart=') \
     <(grep -v '^#' "$KT_BUILD/ktally@.service" | grep -v '%i\|^Description=\|^EnvironmentFile=\|^LoadCredential=\|^ExecStart=') >&2 \
  || fail "the template's settings differ from the plain unit's"

note "$TEST_NAME: systemd-analyze security --offline: ${scores[*]} (at most 2.5)"
