#!/usr/bin/env bash
# /metrics speaks Prometheus's conventions: ktally's series carry
# ktally_job (a job label collides with the scrape's own, which needs
# honor_labels or renames it exported_job), ktally_build_info gives the
# versions `ktally --version` prints, the process_* series are this
# process's (RSS, CPU, open fds, start time, as /proc tells them),
# ktally_read_bytes_total is the bytes of the values produced, and
# ktally_partition_high_watermark each partition's high watermark.
# promtool check metrics passes.
# Then the series an operator alerts on: ktally_partition_lag_seconds is
# the age of the oldest record not yet committed, from the records' own
# timestamps (records stamped an hour ago, read 20 per batch: each scrape's
# age matches the timestamp of the record at the stored offset, within the
# second between two records), and 0 once nothing is left;
# ktally_schema_version is the database's; a SIGHUP that reads a broken
# file sets ktally_config_last_reload_successful to 0 and keeps the time
# of the last success, a good one sets it back to 1 with a later time, and
# a change only a restart applies sets ktally_config_restart_pending.
# Red before: none of these series existed.
# The mock broker: nothing here needs Apache Kafka (timestamps are the
# producer's CreateTime, which the mock keeps).
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"
command -v promtool > /dev/null || fail "promtool not found (scripts/setup installs it)"

db_uri=$(kt_new_db metrics)
topic=$(kt_new_topic metrics 3)
# Values of known length: kcat -l makes one record of each line.
/usr/bin/python3 - "$KT_SEED" > "$WORK/values" <<'PY'
import random, sys
r = random.Random(int(sys.argv[1]))
for i in range(3000):
    print("2017-07-30 14:%02d:%02d %s %s" % (r.randrange(60), r.randrange(60),
          r.choice(["ERROR", "INFO"]), "x" * r.randrange(200)))
PY
kcat -b "$KT_BROKERS" -P -t "$topic" -l -X sticky.partitioning.linger.ms=0 "$WORK/values"
bytes=$(( $(wc -c < "$WORK/values") - $(wc -l < "$WORK/values") ))

"$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --interval 0.5 \
  --http 127.0.0.1:0 --log-format json 2> "$WORK/run.log" &
pid=$!; KT_CHILDREN+=("$pid")
kt_wait_for 20 kt_log_has http "$WORK/run.log" || { cat "$WORK/run.log" >&2; fail "no port said"; }
port=$(kt_log_sum http port "$WORK/run.log")
scrape() { curl -sf --max-time 5 "http://127.0.0.1:$port/metrics" > "$WORK/metrics.txt"; }
metric() { awk -v s="$1" '$1 == s { print $2 }' "$WORK/metrics.txt"; }
all_read() { scrape && [[ $(metric "ktally_records_total{ktally_job=\"$topic\"}") == 3000 ]]; }
kt_wait_for 30 all_read || { cat "$WORK/metrics.txt" >&2; fail "ktally_records_total{ktally_job=...} never reached 3000"; }

promtool check metrics < "$WORK/metrics.txt" > "$WORK/promtool.out" 2>&1 \
  || { cat "$WORK/promtool.out" >&2; fail "promtool check metrics failed"; }
if grep -E '^[a-z_]+\{(.*,)?job=' "$WORK/metrics.txt" >&2; then fail "a series still has a job label"; fi

# The versions, as `ktally --version` says them.
"$KTALLY" --version > "$WORK/version"
version=$(sed -n 's/^ktally //p' "$WORK/version")
librdkafka=$(sed -n 's/^librdkafka //p' "$WORK/version")
mariadb=$(sed -n 's/^MariaDB Connector\/C //p' "$WORK/version")
[[ $(metric "ktally_build_info{version=\"$version\",librdkafka=\"$librdkafka\",mariadb_client=\"$mariadb\"}") == 1 ]] \
  || { grep build_info "$WORK/metrics.txt" >&2; fail "no ktally_build_info for $version, $librdkafka, $mariadb"; }

[[ $(metric "ktally_read_bytes_total{ktally_job=\"$topic\"}") == "$bytes" ]] \
  || fail "ktally_read_bytes_total is $(metric "ktally_read_bytes_total{ktally_job=\"$topic\"}"), the values hold $bytes bytes"
# Every partition's high watermark, as the broker says.
reply=$(kt_watermarks "$topic")
for pw in $reply; do  # partition:low:high
  p=${pw%%:*} high=${pw##*:}
  [[ $(metric "ktally_partition_high_watermark{ktally_job=\"$topic\",topic=\"$topic\",partition=\"$p\"}") == "$high" ]] \
    || { grep high_watermark "$WORK/metrics.txt" >&2; fail "partition $p: high watermark is $high"; }
done

# The process's own figures, next to what /proc says of it.
/usr/bin/python3 - "$pid" "$WORK/metrics.txt" <<'PY' || fail "the process_* series are not this process's"
import os, sys, time
pid, path = int(sys.argv[1]), sys.argv[2]
m = {l.split()[0]: float(l.split()[1]) for l in open(path) if l.startswith("process_")}
rss = int(open(f"/proc/{pid}/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
assert 0.5 * rss < m["process_resident_memory_bytes"] < 2 * rss, (m, rss)
fds = len(os.listdir(f"/proc/{pid}/fd"))
assert abs(m["process_open_fds"] - fds) <= 5, (m, fds)
assert m["process_max_fds"] >= m["process_open_fds"]
stat = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
btime = next(int(l.split()[1]) for l in open("/proc/stat") if l.startswith("btime "))
start = btime + int(stat[19]) / os.sysconf("SC_CLK_TCK")
assert abs(m["process_start_time_seconds"] - start) < 1.5, (m, start)
assert time.time() - 60 < m["process_start_time_seconds"] <= time.time(), m
cpu = (int(stat[11]) + int(stat[12])) / os.sysconf("SC_CLK_TCK")
assert 0 <= m["process_cpu_seconds_total"] <= cpu + 0.5, (m, cpu)
PY
kt_stop "$pid" || fail "exit $? on SIGTERM"

# --- The lag in time, the schema version, the reloads. ---
timed=$(kt_new_topic metrics_timed 1)
db2_uri=$(kt_new_db metrics2); db2=$(kt_db_name "$db2_uri")
t0=$(date +%s)
# Record i stamped t0 - 3600 + i seconds (CreateTime, milliseconds).
/usr/bin/python3 - "$KT_BROKERS" "$timed" "$t0" <<'PY' || fail "could not produce the stamped records"
import sys
from confluent_kafka import Producer
brokers, topic, t0 = sys.argv[1], sys.argv[2], int(sys.argv[3])
p = Producer({"bootstrap.servers": brokers})
for i in range(100):
    p.produce(topic, value=b"2017-07-30 14:00:%02d ERROR x" % (i % 60), partition=0,
              timestamp=(t0 - 3600 + i) * 1000)
assert p.flush(30) == 0
PY
cat > "$WORK/timed.conf" <<CONF
[kafka]
brokers = $KT_BROKERS
topic = $timed
[mysql]
uri = $db2_uri
[batch]
interval = 1
max-per-partition = 20
[http]
http = 127.0.0.1:0
[log]
log-format = json
CONF
"$KTALLY" run --config "$WORK/timed.conf" 2> "$WORK/timed.log" &
pid=$!; KT_CHILDREN+=("$pid")
kt_wait_for 20 kt_log_has http "$WORK/timed.log" || { cat "$WORK/timed.log" >&2; fail "no port said"; }
port=$(kt_log_sum http port "$WORK/timed.log")
series() { echo "$1{ktally_job=\"$timed\"${2:-}}"; }
part=",topic=\"$timed\",partition=\"0\""
# Scrape until caught up; each scrape with some left: the age of the
# record at the stored offset (within 2 s: the scrape's own time, and the
# record before it standing in when the next is not fetched yet).
samples=0
sample() {
  local now offset lag age
  scrape || return 1
  now=$(date +%s.%N)
  offset=$(metric "$(series ktally_partition_offset "$part")")
  lag=$(metric "$(series ktally_partition_lag "$part")")
  age=$(metric "$(series ktally_partition_lag_seconds "$part")")
  [[ -n $offset && -n $age ]] || return 1
  if ((lag > 0)); then
    /usr/bin/python3 -c "import sys; now, t0, off, age = map(float, sys.argv[1:]); \
      want = now - (t0 - 3600 + off); sys.exit(0 if abs(age - want) <= 2 else 1)" \
      "$now" "$t0" "$offset" "$age" \
      || fail "offset $offset, lag $lag: ktally_partition_lag_seconds $age, the record there was written $(python3 -c "print($now - ($t0 - 3600 + $offset))") s ago"
    samples=$((samples + 1))
  fi
  ((lag == 0)) && [[ $age == 0.000 ]]
}
kt_wait_for 60 sample || { cat "$WORK/metrics.txt" >&2; fail "never caught up with ktally_partition_lag_seconds 0"; }
((samples >= 2)) || fail "only $samples scrapes found a lag (20 records a batch, 1 s apart: want 2 or more)"
[[ $(metric "$(series ktally_schema_version)") == "$(kt_sql "$db2" "SELECT MAX(version) FROM ktally_schema")" ]] \
  || fail "ktally_schema_version is $(metric "$(series ktally_schema_version)")"
[[ $(metric "$(series ktally_config_last_reload_successful)") == 1 ]] || fail "the start's settings are not a successful load"
loaded=$(metric "$(series ktally_config_last_reload_success_timestamp_seconds)")

# A file that no longer parses: kept, 0, the time of the last success stays.
cp "$WORK/timed.conf" "$WORK/timed.good"
echo "interval = soon" >> "$WORK/timed.conf"
kill -HUP "$pid"
reload_is() { scrape && [[ $(metric "$(series ktally_config_last_reload_successful)") == "$1" ]]; }
kt_wait_for 10 reload_is 0 || fail "a reload of a broken file left ktally_config_last_reload_successful at 1"
[[ $(metric "$(series ktally_config_last_reload_success_timestamp_seconds)") == "$loaded" ]] \
  || fail "a failed reload moved the time of the last successful one"
# A good file again, with a change only a restart applies.
sed -e 's/^interval = 1$/interval = 2/' -e "s/^http = .*/http = 127.0.0.1:1/" "$WORK/timed.good" > "$WORK/timed.conf"
kill -HUP "$pid"
kt_wait_for 10 reload_is 1 || fail "a good reload did not set ktally_config_last_reload_successful back to 1"
[[ $(metric "$(series ktally_config_restart_pending)") == 1 ]] || fail "a changed --http did not set ktally_config_restart_pending"
/usr/bin/python3 -c "import sys; sys.exit(0 if float(sys.argv[2]) > float(sys.argv[1]) else 1)" \
  "$loaded" "$(metric "$(series ktally_config_last_reload_success_timestamp_seconds)")" \
  || fail "a successful reload did not move ktally_config_last_reload_success_timestamp_seconds"
promtool check metrics < "$WORK/metrics.txt" > "$WORK/promtool.out" 2>&1 \
  || { cat "$WORK/promtool.out" >&2; fail "promtool check metrics failed on the new series"; }
kt_stop "$pid" || fail "exit $? on SIGTERM"
note "$TEST_NAME: ktally_job labels, build info $version/$librdkafka/$mariadb, $bytes bytes read, high watermarks and process_* right; promtool clean; lag in time right in $samples scrapes and 0 caught up, schema version, reload outcome and restart pending"
