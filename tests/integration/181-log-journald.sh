#!/usr/bin/env bash
# Under systemd, journald gets every record with its priority and fields:
# a batch's JOB=, BATCH=, RECORDS=... (journalctl -o json shows them, and
# journalctl JOB=logs selects them), and the error that ends the process
# at priority 3 (err), so that `journalctl -p err` shows why the service
# died (it was a bare fprintf to the stream, filed at info). With
# --log-format json on the journal's stream, each line carries its
# priority as a "<N>" prefix. A fake journald (fake-journald.py) in a
# private mount namespace listens where GLib's writer looks for the real one.
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

[[ $(id -u) == 0 ]] || fail "needs root: the fake journald needs a private mount namespace (CI runs as root)"

db_uri=$(kt_new_db journald)
topic=$(kt_new_topic journald 3)
kt_gen "$topic" --lines 3000 --seed 1810 --truth "$WORK/truth" > "$WORK/gen"
messages=$(sed 's/.*messages=\([0-9]*\).*/\1/' "$WORK/gen")

under_journald() {  # under_journald OUT COMMAND...: COMMAND as a service under journald
  local out=$1; shift
  unshare -m --propagation private sh -c 'mount -t tmpfs tmpfs /run && exec "$@"' sh \
    /usr/bin/python3 "$KT_SRC/tests/integration/fake-journald.py" "$out" "$@"
}

under_journald "$WORK/run.json" "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" \
  --db "$db_uri" --exit-when-idle --interval 0 --max-per-partition 300 \
  || { cat "$WORK/run.json" >&2; fail "run under journald failed"; }
kt_check_counts "$(kt_db_name "$db_uri")" "$WORK/truth"
/usr/bin/python3 - "$WORK/run.json" "$topic" "$messages" <<'PY' || { cat "$WORK/run.json" >&2; fail "journald did not get the batch fields"; }
import json, sys
path, topic, messages = sys.argv[1], sys.argv[2], int(sys.argv[3])
entries = [json.loads(l) for l in open(path)]
stream = [e["STREAM"] for e in entries if "STREAM" in e]
assert not stream, f"text went to the stream, not to journald: {stream[:3]}"
batches = [e for e in entries if e.get("EVENT") == "batch"]
assert len(batches) >= 3, len(batches)
for b in batches:
    assert b["PRIORITY"] == "5" and b["JOB"] == topic and b["TOPIC"] == topic, b
    assert b["MESSAGE"].startswith(f"job {topic}: batch {b['BATCH']}: "), b
    for f in ("BATCH", "PARTITIONS", "RECORDS", "LINES", "ERRORS", "MALFORMED", "LAG", "DURATION"):
        float(b[f])
assert sum(int(b["RECORDS"]) for b in batches) == messages
assert [int(b["BATCH"]) for b in batches] == sorted(int(b["BATCH"]) for b in batches)
# GLib's own records (the start-up line) keep their fields too.
assert any(e.get("GLIB_DOMAIN") == "ktally" and "reading" in e["MESSAGE"] for e in entries)
PY

# The error that ends the process: priority 3, with its exit status.
rc=0
under_journald "$WORK/fail.json" "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" \
  --db "$KT_DB_URI_BASE/no_such_db_$RUN_ID" --startup-timeout 1 || rc=$?
((rc == 3)) || { cat "$WORK/fail.json" >&2; fail "a missing database under journald: exit $rc, expected 3"; }
kt_log_match '.PRIORITY == "3" and .EVENT == "exit" and .EXIT_STATUS == "3"
              and (.MESSAGE | test("Unknown database"))' "$WORK/fail.json" \
  || { cat "$WORK/fail.json" >&2; fail "the fatal error did not reach journald at priority 3"; }
if kt_log_match '.STREAM != null' "$WORK/fail.json"; then
  cat "$WORK/fail.json" >&2; fail "the fatal error also went to the stream (journald files it at info)"
fi

# json on the journal's stream: "<N>" gives each line its priority.
rc=0
under_journald "$WORK/json.json" "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" \
  --db "$KT_DB_URI_BASE/no_such_db_$RUN_ID" --startup-timeout 1 --log-format json || rc=$?
((rc == 3)) || fail "json under journald: exit $rc"
kt_log_match '.STREAM != null and (.STREAM | startswith("<3>{"))
              and (.STREAM[3:] | fromjson | .level == "error" and .exit_status == 3)' "$WORK/json.json" \
  || { cat "$WORK/json.json" >&2; fail "json: no <3> exit line on the stream"; }

note "$TEST_NAME: $(jq -s 'map(select(.EVENT == "batch")) | length' "$WORK/run.json") batch records with JOB=, BATCH=, RECORDS=... in journald; the fatal error at priority 3"
