#!/usr/bin/env bash
# /metrics speaks Prometheus's conventions: ktally's series carry
# ktally_job (a job label collides with the scrape's own, which needs
# honor_labels or renames it exported_job), ktally_build_info gives the
# versions `ktally --version` prints, the process_* series are this
# process's (RSS, CPU, open fds, start time, as /proc tells them),
# ktally_read_bytes_total is the bytes of the values produced, and
# ktally_partition_high_watermark each partition's high watermark.
# promtool check metrics passes.
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
note "$TEST_NAME: ktally_job labels, build info $version/$librdkafka/$mariadb, $bytes bytes read, high watermarks and process_* right; promtool clean"
