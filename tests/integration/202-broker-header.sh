#!/usr/bin/env bash
# A test meant for the other broker stops at once with one line saying so,
# never runs half-way: lib.sh checks each test's "# broker:" line against
# the services (and a missing line), kt_ctl refuses Apache Kafka (it has
# no control socket), kt_broker refuses the mock (it has no broker
# processes), and kt_new_topic refuses topic configs on the mock. Red if
# any of these runs, or fails without naming why.
# broker: any — checks the refusals of whichever broker the services run
source "$(dirname "$0")/lib.sh"

other=mock; [[ $KT_KAFKA == mock ]] && other=apache
probe() {  # probe NAME HEADER BODY: runs a test script made of HEADER and BODY; its stderr in $WORK/NAME.err
  printf '#!/usr/bin/env bash\n%s\nsource %q\n%s\n' "$2" "$KT_SRC/tests/integration/lib.sh" "$3" > "$WORK/$1.sh"
  chmod +x "$WORK/$1.sh"
  rc=0; "$WORK/$1.sh" > "$WORK/$1.out" 2> "$WORK/$1.err" || rc=$?
}
refused() {  # refused NAME PATTERN: the probe failed with one FAIL line matching PATTERN, and ran nothing after
  [[ $rc == 1 ]] || { cat "$WORK/$1.err" >&2; fail "$1: exit $rc, not 1"; }
  [[ $(grep -c '^FAIL: ' "$WORK/$1.err") == 1 ]] && grep -q "^FAIL: $1: .*$2" "$WORK/$1.err" \
    || { cat "$WORK/$1.err" >&2; fail "$1: no single line saying '$2'"; }
  ! grep -q "went on" "$WORK/$1.out" || fail "$1: the test went on after the refusal"
}

probe wrong-broker "# broker: $other — made by $TEST_NAME" 'echo went on'
refused wrong-broker "needs $([[ $other == mock ]] && echo "the mock broker" || echo "Apache Kafka")"
probe no-header "# (no broker line)" 'echo went on'
refused no-header "no '# broker: any|mock|apache - why' line"
if [[ $KT_KAFKA == apache ]]; then
  probe ctl "# broker: any — made by $TEST_NAME" 'kt_ctl ping; echo went on'
  refused ctl "kt_ctl ping: the mock's control socket does not exist on Apache Kafka"
else
  probe broker "# broker: any — made by $TEST_NAME" 'kt_broker kill 1; echo went on'
  refused broker "kt_broker kill: needs Apache Kafka"
  probe configs "# broker: any — made by $TEST_NAME" 't=$(kt_new_topic x 1 --config cleanup.policy=compact); echo went on'
  refused configs "needs Apache Kafka (the mock knows no topic configs)"
fi
note "$TEST_NAME: a test for the other broker, one without a broker line, and a helper of the other broker each stop with one line ($KT_KAFKA)"
