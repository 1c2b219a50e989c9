#!/usr/bin/env bash
# --log-format json and logfmt (and [log] log-format in a config file):
# every line on stderr is one record a machine reads (time, level,
# message), the batch lines carry the batch's figures as fields, which add
# up to what the generator wrote, and the error that ends the process is
# one record at level error with its exit status. text stays the default.
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

db_uri=$(kt_new_db logfmt); db=$(kt_db_name "$db_uri")
topic=$(kt_new_topic logfmt 4)
kt_gen "$topic" --lines 30000 --lines-per-value 3 --seed 180 --truth "$WORK/truth" > "$WORK/gen"
messages=$(sed 's/.*messages=\([0-9]*\).*/\1/' "$WORK/gen")
errors=$(sed 's/.*errors=\([0-9]*\).*/\1/' "$WORK/gen")
malformed=$(sed 's/.*malformed=\([0-9]*\).*/\1/' "$WORK/gen")

# json: batches of at most 400 offsets per partition, so there are several.
"$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --job j1 \
  --exit-when-idle --interval 0 --max-per-partition 400 --log-format json 2> "$WORK/json.log" \
  || { cat "$WORK/json.log" >&2; fail "run --log-format json failed"; }
kt_check_counts "$db" "$WORK/truth"
/usr/bin/python3 - "$WORK/json.log" "$messages" "$errors" "$malformed" <<'PY' || fail "the json log is not what it should be"
import json, sys
path, messages, errors, malformed = sys.argv[1], *map(int, sys.argv[2:])
records = [json.loads(line) for line in open(path)]  # every line is one object
assert records, "no record"
for r in records:
    assert isinstance(r, dict) and r["time"].endswith("Z") and r["level"] in ("info", "warning"), r
    assert isinstance(r["message"], str) and r["message"], r
batches = [r for r in records if r.get("event") == "batch"]
assert len(batches) >= 5, f"{len(batches)} batch records"
for b in batches:
    for f in ("batch", "partitions", "records", "lines", "errors", "malformed", "lag"):
        assert type(b[f]) is int, (f, b)
    assert type(b["duration"]) in (int, float) and b["job"] == "j1", b
    assert b["message"].startswith(f"job j1: batch {b['batch']}: "), b
assert sum(b["records"] for b in batches) == messages
assert sum(b["lines"] for b in batches) == 30000
assert sum(b["errors"] for b in batches) == errors
assert sum(b["malformed"] for b in batches) == malformed
assert batches[-1]["lag"] == 0
done = [r for r in records if r.get("event") == "done"]
assert len(done) == 1 and done[0]["records"] == messages and done[0]["errors"] == errors, done
PY
[[ $(kt_log_sum batch records "$WORK/json.log") == "$messages" ]] || fail "kt_log_sum does not add up"

# logfmt, from the config file's [log] section (config --check shows it),
# over 2000 more lines.
cat > "$WORK/k.conf" <<CONF
[log]
log-format = logfmt
CONF
"$KTALLY" config --check --config "$WORK/k.conf" --brokers "$KT_BROKERS" --topic "$topic" \
  --db "$db_uri" > "$WORK/check" || fail "config --check refused [log]"
grep -qx "log-format = logfmt" "$WORK/check" || fail "config --check does not show log-format"
kt_gen "$topic" --lines 2000 --seed 181 > /dev/null
"$KTALLY" run --config "$WORK/k.conf" --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" \
  --job j1 --exit-when-idle --interval 0 --max-per-partition 200 2> "$WORK/logfmt.log" \
  || { cat "$WORK/logfmt.log" >&2; fail "run with [log] log-format = logfmt failed"; }
/usr/bin/python3 - "$WORK/logfmt.log" 2000 <<'PY' || fail "the logfmt log is not what it should be"
import re, sys
pair = re.compile(r'([a-z_]+)=("(?:[^"\\]|\\.)*"|[^ "=]+)(?: |$)')
total, last_lag = 0, None
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    pos, r = 0, {}
    while pos < len(line):
        m = pair.match(line, pos)
        assert m, f"not logfmt at {pos}: {line!r}"
        v = m.group(2)
        r[m.group(1)] = re.sub(r'\\(.)', r'\1', v[1:-1]) if v.startswith('"') else v
        pos = m.end()
    assert list(r)[:3] == ["time", "level", "msg"], line
    if r.get("event") == "batch":
        assert r["job"] == "j1" and r["msg"].startswith(f"job j1: batch {r['batch']}: "), r
        for f in ("batch", "partitions", "records", "lines", "errors", "malformed", "lag"):
            assert r[f].isdigit(), (f, r)
        total += int(r["records"])
        last_lag = int(r["lag"])
assert total == int(sys.argv[2]), total
assert last_lag == 0, last_lag
PY

# The error that ends the process: one record, level error, its status.
rc=0
"$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$KT_DB_URI_BASE/no_such_db_$RUN_ID" \
  --startup-timeout 1 --log-format json 2> "$WORK/fail.log" || rc=$?
((rc == 3)) || fail "a missing database: exit $rc, expected 3"
kt_log_match '.level == "error" and .event == "exit" and .exit_status == 3
              and (.message | test("Unknown database"))' "$WORK/fail.log" \
  || { cat "$WORK/fail.log" >&2; fail "no exit record at level error"; }
# ...and in text, the one line scripts have always matched.
"$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$KT_DB_URI_BASE/no_such_db_$RUN_ID" \
  --startup-timeout 1 2> "$WORK/fail.txt" && fail "a missing database succeeded"
grep -qx "ktally: cannot connect to MySQL at .*Unknown database 'no_such_db_$RUN_ID' (create it first: CREATE DATABASE; ktally creates its tables in it)" "$WORK/fail.txt" \
  || { cat "$WORK/fail.txt" >&2; fail "text: no 'ktally: ...' line"; }

rc=0; "$KTALLY" run --log-format yaml 2> "$WORK/usage" || rc=$?
[[ $rc == 2 ]] && grep -q "^ktally: --log-format: 'yaml' is not a log format (text, json or logfmt)" "$WORK/usage" \
  || { cat "$WORK/usage" >&2; fail "--log-format yaml: exit $rc"; }

note "$TEST_NAME: json and logfmt: every line a record, batch figures add up to $messages records exact; exit error at level error"
