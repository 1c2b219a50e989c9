#!/usr/bin/env bash
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
# scripts/soak on a fresh clone builds what it runs (meson setup, then
# ktally and the test broker) instead of stopping with "build first", and
# goes on to the history checker; run again, it finds the build there.
# A clone of this checkout's HEAD (what CI tests is committed), its own
# build directory; the running services are used as they are. No history
# is run (--histories 0): the checker's own CI step runs them. Red before:
# exit 2, "soak: build first". The mock broker of the running services.
source "$(dirname "$0")/lib.sh"

git clone --quiet "$KT_SRC" "$WORK/clone" || fail "cannot clone $KT_SRC"
[[ ! -e $WORK/clone/build ]] || fail "the clone has a build directory already"
env_file=$KT_SERVICES_DIR/env
[[ -s $env_file ]] || fail "no services env at $env_file"
rc=0
(cd "$WORK/clone" && KT_SERVICES_ENV=$env_file scripts/soak --histories 0) > "$WORK/soak.out" 2>&1 || rc=$?
((rc == 0)) || { tail -20 "$WORK/soak.out" >&2; fail "scripts/soak on a fresh clone: exit $rc"; }
[[ -x $WORK/clone/build/src/ktally && -x $WORK/clone/build/tests/support/kt-mock-broker ]] \
  || fail "scripts/soak did not build ktally and the test broker"
grep -q "^history checker: 0 passed, 0 failed" "$WORK/soak.out" || { cat "$WORK/soak.out" >&2; fail "the checker did not run"; }
# Again: the build is there, nothing to set up.
(cd "$WORK/clone" && KT_SERVICES_ENV=$env_file scripts/soak --histories 0) > "$WORK/soak2.out" 2>&1 \
  || { tail -20 "$WORK/soak2.out" >&2; fail "scripts/soak a second time failed"; }
if grep -q "meson setup" "$WORK/soak2.out"; then fail "scripts/soak set up a build that was there"; fi
note "$TEST_NAME: a fresh clone built and soaked; the second run reused the build"
