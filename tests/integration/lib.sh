# tests/integration/lib.sh - shared helpers for the integration tests.
#
# Each test sources this file. It loads the connection settings that
# `scripts/services start` wrote, and fails (never skips) when a service is
# missing: a skipped integration test would turn CI green untested.
#
# Which services: $KT_SERVICES_ENV names their env file; without it,
# KT_KAFKA=apache (meson sets it for the real-Kafka tier, the suite
# 'apache') takes $KT_BUILD/services-apache/env where that exists, and
# everything else $KT_BUILD/services/env.
#
# Which broker: each test's header has one line
#   # broker: any|mock|apache - why
# and fails here, at once and in one line, when the services run the
# other one. The mock (librdkafka's, kt-mock-broker) is the tool for
# faults injected into the protocol; Apache Kafka for what only a real
# broker does (transactions, compaction, retention by time, a real group
# coordinator, broker processes dying).
set -euo pipefail

: "${KT_SRC:?KT_SRC must point at the source tree (meson sets it)}"
: "${KT_BUILD:?KT_BUILD must point at the build tree (meson sets it)}"
if [[ -n ${KT_SERVICES_ENV:-} ]]; then
  env_file=$KT_SERVICES_ENV
elif [[ ${KT_KAFKA:-} == apache && -r $KT_BUILD/services-apache/env ]]; then
  env_file=$KT_BUILD/services-apache/env
else
  env_file=$KT_BUILD/services/env
fi
[[ -r $env_file ]] || { echo "FAIL: no services env at $env_file: run scripts/services start" >&2; exit 1; }
# shellcheck disable=SC1090
source "$env_file"
KT_KAFKA=${KT_KAFKA:-mock}  # an env file from before there was a choice

KTALLY=$KT_BUILD/src/ktally
KT_GEN=$KT_BUILD/tests/support/kt-gen
KT_BROKER=$KT_BUILD/tests/support/kt-mock-broker
KT_ADMIN=$KT_BUILD/tests/support/kt-admin
TEST_NAME=$(basename "$0" .sh)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/kt-$TEST_NAME.XXXXXX")
# A unique suffix: topics live as long as the broker, databases as long as
# the datadir, so reruns must not collide with what an earlier run left.
RUN_ID=$(date +%s)$$
trap 'kt_cleanup' EXIT

KT_CHILDREN=()
kt_cleanup() {
  local pid
  for pid in "${KT_CHILDREN[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}

fail() { echo "FAIL: $TEST_NAME: $*" >&2; exit 1; }
note() { echo "# $*"; }

# The test's own "# broker:" line against what the services run.
kt_check_broker() {
  local line need why
  line=$(grep -m1 '^# broker:' "$0" || true)
  need=$(sed -n 's/^# broker: *\([a-z]*\).*/\1/p' <<< "$line")
  why=$(sed 's/^# broker: *[a-z]* *[-—]* *//' <<< "$line")
  case $need in
    any) ;;
    mock)
      [[ $KT_KAFKA == mock ]] ||
        fail "needs the mock broker ($why), but $env_file is Apache Kafka $KT_KAFKA_VERSION: run it against scripts/services start --kafka mock" ;;
    apache)
      [[ $KT_KAFKA == apache ]] ||
        fail "needs Apache Kafka ($why), but $env_file is the mock: run scripts/services start --kafka apache (and KT_KAFKA=apache or KT_SERVICES_ENV)" ;;
    *) fail "its header has no '# broker: any|mock|apache - why' line" ;;
  esac
}
kt_check_broker

kt_sql() {  # kt_sql DB SQL...: runs SQL, tab-separated output without headers
  local db=$1; shift
  mariadb -h "$KT_MYSQL_HOST" -P "$KT_MYSQL_PORT" -u "$KT_MYSQL_USER" \
    -p"$KT_MYSQL_PASSWORD" -N -B "$db" -e "$*"
}

kt_new_db() {  # kt_new_db NAME: a fresh, empty database; prints its URI
  local db=${1}_$RUN_ID
  kt_sql mysql "DROP DATABASE IF EXISTS $db; CREATE DATABASE $db"
  echo "$KT_DB_URI_BASE/$db"
}

kt_db_name() { echo "${1##*/}"; }  # the database of a URI

# The other server (scripts/services start-other): a second private
# MariaDB, unrelated to the services' one, for hosts lists that name a
# foreign server. Started on first use (about 3 s), kept for the next
# tests; `scripts/services stop` stops it. Sets KT_MYSQL_OTHER_PORT.
kt_other_mysql() {
  KT_MYSQL_OTHER_PORT=$("$KT_SERVICES" start-other 2> "$WORK/other-mysql.log") \
    || { cat "$WORK/other-mysql.log" >&2; fail "scripts/services start-other failed"; }
}
kt_other_ktally_db() {  # kt_other_ktally_db DB [MODE]: DB on the other server, made a
  # ktally database by init-db (its own identity); sets other_uri and other_id
  kt_other_sql mysql "DROP DATABASE IF EXISTS $1; CREATE DATABASE $1"
  other_uri="mysql://$KT_MYSQL_USER:$KT_MYSQL_PASSWORD@127.0.0.1:$KT_MYSQL_OTHER_PORT/$1"
  "$KTALLY" init-db --mode "${2:-transactional}" --db "$other_uri" 2> "$WORK/other-init.log" \
    || { cat "$WORK/other-init.log" >&2; fail "init-db on the other server failed"; }
  other_id=$(kt_other_sql "$1" "SELECT id FROM ktally_database")
  [[ $other_id =~ ^[0-9a-f-]{36}$ ]] || fail "init-db made no identity on the other server: '$other_id'"
}
kt_other_sql() {  # kt_other_sql DB SQL...: kt_sql on the other server
  local db=$1; shift
  mariadb --no-defaults -h 127.0.0.1 -P "$KT_MYSQL_OTHER_PORT" -u "$KT_MYSQL_USER" \
    -p"$KT_MYSQL_PASSWORD" -N -B "$db" -e "$*"
}

kt_new_topic() {  # kt_new_topic NAME PARTITIONS [--replication N] [--config KEY=VALUE]...:
                  # creates NAME_RUNID, waits until it is ready, prints its name;
                  # replication and configs need Apache Kafka (3 replicas by default)
  local topic=$1_$RUN_ID partitions=$2
  shift 2
  if [[ $KT_KAFKA == apache ]]; then
    "$KT_ADMIN" --brokers "$KT_BROKERS" create "$topic" "$partitions" "$@" >/dev/null ||
      fail "cannot create topic $topic"
  else
    (($# == 0)) ||
      fail "kt_new_topic $topic: $* needs Apache Kafka (the mock knows no topic configs): mark the test '# broker: apache'"
    "$KT_BROKER" ctl --control "$KT_BROKER_CTL" create "$topic" "$partitions" >/dev/null ||
      fail "cannot create topic $topic"
  fi
  echo "$topic"
}

kt_new_trimmed_topic() {  # kt_new_trimmed_topic NAME PARTITIONS: like kt_new_topic, but each
                          # partition keeps only about its last 5 MB, as the mock keeps every
                          # topic: for tests of data lost to retention (see kt_wait_trimmed)
  if [[ $KT_KAFKA == apache ]]; then
    kt_new_topic "$1" "$2" --config retention.bytes=4194304 --config segment.bytes=1048576
  else
    kt_new_topic "$1" "$2"
  fi
}

kt_log_start() {  # kt_log_start TOPIC PARTITION: the partition's log start offset
  kt_watermarks "$1" | tr ' ' '\n' | awk -F: -v p="$2" '$1 == p { print $2 }'
}

kt_wait_trimmed() {  # kt_wait_trimmed TOPIC PARTITION ABOVE: prints the partition's log start
                     # once retention has moved it above ABOVE and is done with it. The mock
                     # trims as records arrive; Apache Kafka deletes whole segments on its own
                     # timer (every second here), so there it must also stay put for 3 s.
  local topic=$1 partition=$2 above=$3 low last=-1 since=$SECONDS deadline=$((SECONDS + 60))
  while ((SECONDS < deadline)); do
    low=$(kt_log_start "$topic" "$partition") || low=-1
    if ((low > above)); then
      [[ $KT_KAFKA == mock ]] && { echo "$low"; return 0; }
      if ((low != last)); then last=$low; since=$SECONDS
      elif ((SECONDS - since >= 3)); then echo "$low"; return 0; fi
    fi
    sleep 0.5
  done
  fail "retention did not move the log start of $topic/$partition above $above within 60 s (it is ${low:-unknown})"
}

kt_admin() {  # kt_admin COMMAND ARGS...: kt-admin on these services (see tests/support/kt-admin.c)
  "$KT_ADMIN" --brokers "$KT_BROKERS" "$@"
}

kt_watermarks() {  # kt_watermarks TOPIC: one line, PARTITION:LOW:HIGH ..., on either broker
  if [[ $KT_KAFKA == apache ]]; then
    kt_admin watermarks "$1"
  else
    local reply
    reply=$(kt_ctl watermarks "$1") || return 1
    echo "${reply#ok }"
  fi
}

kt_absent_topic() {  # kt_absent_topic NAME: prints NAME_RUNID, a topic that does not exist.
                     # The mock creates any topic a client names, so there it answers
                     # UNKNOWN_TOPIC_OR_PART for it instead; Apache Kafka never creates
                     # one that only a consumer asks about.
  local topic=$1_$RUN_ID
  if [[ $KT_KAFKA == mock ]]; then
    kt_ctl topic-error "$topic" UNKNOWN_TOPIC_OR_PART >/dev/null || fail "cannot hide topic $topic"
  fi
  echo "$topic"
}

# Mock-only: the control socket of kt-mock-broker (injected protocol
# errors, rtt, brokers down/up, leader moves, topic errors). A test that
# uses it says '# broker: mock'; on Apache Kafka it stops here, loudly.
kt_ctl() {
  [[ $KT_KAFKA == mock ]] ||
    fail "kt_ctl $1: the mock's control socket does not exist on Apache Kafka $KT_KAFKA_VERSION (mark the test '# broker: mock', or use kt_broker)"
  "$KT_BROKER" ctl --control "$KT_BROKER_CTL" "$@"
}

# Apache-Kafka-only: broker processes. kt_broker kill|restart|pause|resume N
# (kill -9; start again and wait until it is back; SIGSTOP; SIGCONT).
kt_broker() {
  [[ $KT_KAFKA == apache ]] ||
    fail "kt_broker $1: needs Apache Kafka (on the mock, kt_ctl down/up)"
  "$KT_SERVICES" "$1-broker" "$2" >/dev/null || fail "scripts/services $1-broker $2 failed"
}

kt_gen() {  # kt_gen TOPIC ARGS...: produces with kt-gen; prints its summary
  local topic=$1; shift
  "$KT_GEN" --brokers "$KT_BROKERS" --topic "$topic" "$@"
}

kt_notify_listen() {  # kt_notify_listen ADDRESS OUT: a $NOTIFY_SOCKET listener, one line per datagram (its newlines as '|'); @NAME: abstract
  /usr/bin/python3 - "$1" "$2" <<'PY' &
import socket, sys
addr, out = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("\0" + addr[1:] if addr.startswith("@") else addr)
with open(out, "a", buffering=1) as f:
    while True:
        f.write(s.recv(4096).decode().replace("\n", "|") + "\n")
PY
  KT_CHILDREN+=($!)
}

kt_sum_truths() {  # kt_sum_truths FILE...: adds per-minute truths together
  cat "$@" | awk -F'\t' '{ n[$1] += $2 } END { for (m in n) printf "%s\t%d\n", m, n[m] }' | sort
}

kt_check_counts() {  # kt_check_counts DB TRUTH [TABLE]: error_log == truth, exactly
  local db=$1 truth=$2 table=${3:-error_log}
  kt_sql "$db" "SELECT log_time, log_count FROM $table ORDER BY log_time" > "$WORK/got.tsv"
  if ! diff -q "$WORK/got.tsv" "$truth" > /dev/null; then
    diff "$WORK/got.tsv" "$truth" | head -20 >&2 || true  # head may close the pipe first
    fail "$table in $db differs from the truth ($(wc -l < "$WORK/got.tsv") vs $(wc -l < "$truth") minutes)"
  fi
}

kt_offset_sum() {  # kt_offset_sum DB JOB: sum of the stored offsets of a job
  kt_sql "$1" "SELECT COALESCE(SUM(\`offset\`), 0) FROM kafka_offset WHERE job = '$2'"
}

# Figures come from the log's machine-readable form (--log-format json:
# one object per line, a batch's figures as fields), never from the text
# people read. Lines that are not JSON (a sanitizer's report, a line cut
# by kill -9) are skipped.
kt_log_sum() {  # kt_log_sum EVENT FIELD LOG...: FIELD added over the EVENT records
  local event=$1 field=$2; shift 2
  cat "$@" | jq -Rn --arg e "$event" --arg f "$field" \
    '[inputs | fromjson? | objects | select(.event == $e) | .[$f] // 0] | add // 0'
}

kt_log_count() {  # kt_log_count EVENT LOG...: how many EVENT records
  local event=$1; shift
  cat "$@" | jq -Rn --arg e "$event" '[inputs | fromjson? | objects | select(.event == $e)] | length'
}

kt_log_count_if() {  # kt_log_count_if CONDITION LOG...: how many records meet the jq CONDITION
  local condition=$1; shift
  cat "$@" | jq -Rn "[inputs | fromjson? | objects | select($condition)] | length"
}

kt_log_has() {  # kt_log_has EVENT LOG...: whether there is an EVENT record
  (($(kt_log_count "$@") > 0))
}

kt_log_match() {  # kt_log_match CONDITION LOG...: whether a record meets the jq CONDITION
  local condition=$1; shift
  cat "$@" | jq -Rne "[inputs | fromjson? | objects | select($condition)] | length > 0" > /dev/null
}

kt_wait_for() {  # kt_wait_for SECONDS COMMAND...: until COMMAND succeeds
  local deadline=$((SECONDS + $1)); shift
  until "$@"; do
    ((SECONDS < deadline)) || return 1
    sleep 0.1
  done
}

kt_http_port() {  # kt_http_port LOG [SECONDS]: the port a `--http 127.0.0.1:0` run
                  # logged it listens on (text or JSON log), once it has
  # The kernel picks the port and ktally says which: a port drawn at random
  # by the test may be taken by then (by any outgoing connection of the
  # suite: the ephemeral range is the kernel's, 32768-60999 here).
  local log=$1 deadline=$((SECONDS + ${2:-30})) port
  while :; do
    port=$({ grep -o "on port [0-9]* of" "$log" | awk '{ print $3 }';
             jq -Rr 'fromjson? | objects | select(.event == "http") | .port' "$log"; } 2> /dev/null | head -1)
    [[ -n $port ]] && { echo "$port"; return 0; }
    ((SECONDS < deadline)) || return 1
    sleep 0.1
  done
}

kt_rand() {  # kt_rand N: a number in [0, N) from the test's seeded RANDOM
  echo $((RANDOM % $1))
}

kt_kill9() {  # kt_kill9 MIN_MS SPREAD_MS LOG COMMAND...: runs COMMAND (stderr to LOG),
              # kill -9 after MIN_MS + [0, SPREAD_MS) ms; succeeds if the kill landed
  local min=$1 spread=$2 log=$3 pid ms landed=1
  shift 3
  "$@" 2>> "$log" &
  pid=$!; KT_CHILDREN+=("$pid")
  ms=$((min + $(kt_rand "$spread")))
  sleep "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))"
  kill -9 "$pid" 2> /dev/null && landed=0
  wait "$pid" 2> /dev/null || true
  return "$landed"
}

# Seeded and reproducible: a failing run prints the seed to rerun it with.
KT_SEED=${KT_SEED:-$(( $(date +%s) % 100000 ))}
RANDOM=$KT_SEED
note "$TEST_NAME: seed $KT_SEED (rerun with KT_SEED=$KT_SEED)"

kt_dry_run_alike() {  # kt_dry_run_alike RC ERR COMMAND...: COMMAND has --execute, and exited
                      # RC saying ERR (a file); without --execute it must exit RC and say
                      # the same: a dry run refuses what the execution refuses (reset, forget)
  local rc=$1 err=$2 arg dry=() drc=0; shift 2
  for arg in "$@"; do [[ $arg == --execute ]] || dry+=("$arg"); done
  "${dry[@]}" > "$WORK/dry.out" 2> "$WORK/dry.err" || drc=$?
  [[ $drc == "$rc" ]] && cmp -s "$err" "$WORK/dry.err" \
    || { cat "$WORK/dry.out" "$WORK/dry.err" >&2; fail "${dry[*]}: the dry run exited $drc, the execution $rc ($(head -c 300 "$err"))"; }
}

kt_audit() {  # kt_audit DB_URI: `ktally audit` must pass
  "$KTALLY" audit --db "$1" > "$WORK/audit.out" 2>&1 || { cat "$WORK/audit.out" >&2; fail "ktally audit failed"; }
}

kt_stop() {  # kt_stop PID [SIGNAL]: signal, then wait up to 20 s for exit 0
  local pid=$1 sig=${2:-TERM} rc=0 i
  kill -"$sig" "$pid" 2> /dev/null || true
  for ((i = 0; i < 200; i++)); do
    kill -0 "$pid" 2> /dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2> /dev/null; then
    # Leave the evidence: where every thread of the stuck process waits.
    gdb -q -batch -p "$pid" -ex "thread apply all bt 15" > "$WORK/stuck-$pid.txt" 2>&1 || true
    grep -E "^#[0-9]+ .* in (kt_|rd_kafka|mysql|main)" "$WORK/stuck-$pid.txt" | head -20 >&2
    kill -9 "$pid" 2> /dev/null || true
    fail "process $pid did not exit within 20 s of SIG$sig"
  fi
  wait "$pid" || rc=$?
  return "$rc"
}

# --- kt-gen --shape (log analytics lines, #14) ---------------------------------
kt_shape_options() {  # kt_shape_options SHAPE [kt-gen ARGS...]: the ktally options its
                      # truth is for (--pattern, --by, --sum...), into the array KT_OPTS
  local shape=$1; shift
  mapfile -t KT_OPTS < <("$KT_GEN" --shape "$shape" "$@" --print-options)
  ((${#KT_OPTS[@]} > 0)) || fail "kt-gen --shape $shape --print-options printed nothing"
}

kt_shape_columns() {  # the columns of KT_OPTS's table, in the truth's order (a field path's
  local by sum       # column: every byte but [A-Za-z0-9_] made '_', as kt_field_column())
  by=$(printf '%s\n' "${KT_OPTS[@]}" | sed -n 's/^--by=//p' | sed 's/[^A-Za-z0-9_,]/_/g')
  sum=$(printf '%s\n' "${KT_OPTS[@]}" | sed -n 's/^--sum=//p' | sed 's/[^A-Za-z0-9_,]/_/g')
  echo "log_time${by:+, \`${by//,/\`, \`}\`}, log_count${sum:+, \`sum_${sum//,/\`, \`sum_}\`}"
}

kt_check_groups() {  # kt_check_groups DB TRUTH [TABLE]: TABLE (error_log) holds exactly the
                     # shaped truth, per (bucket, key), counts and sums
  local db=$1 truth=$2 table=${3:-error_log}
  kt_sql "$db" "SELECT $(kt_shape_columns) FROM \`$table\`" | LC_ALL=C sort > "$WORK/got-groups.tsv"
  if ! cmp -s "$WORK/got-groups.tsv" "$truth"; then
    diff "$WORK/got-groups.tsv" "$truth" | head -20 >&2 || true
    fail "$table in $db differs from the truth ($(wc -l < "$WORK/got-groups.tsv") vs $(wc -l < "$truth") rows)"
  fi
}

