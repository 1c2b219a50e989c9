#!/usr/bin/env bash
# The container image (scripts/container/Containerfile, #36), run under
# podman the way a container platform runs it: PID 1, as the package's
# user (uid 10001, no capability, no-new-privileges), a read-only root file
# system and no writable path at all, host network to this machine's
# MariaDB and brokers; its settings only as KTALLY_ variables and a mounted
# ktally.conf, the password as a mounted file (as README.md mounts it, and
# a compose secret: 0400 and the user's; then a Kubernetes Secret's shape,
# root:10001 0440).
#   - /livez, /readyz and /metrics answer as probes and a scraper use them;
#     the records are JSON lines on stdout, nothing on stderr;
#   - SIGTERM (podman stop) mid-backlog: exit 0 within the grace period,
#     the batch in flight committed whole or dropped;
#   - SIGKILL (podman kill) mid-backlog, then a new container drains the
#     rest: the history checker's rule, once, in the image: the counts
#     equal the truth, the stored offsets are the high watermarks, and
#     `ktally audit` finds one unbroken chain;
#   - a password in KTALLY_DB is refused (exit 2) and never printed.
# Red before: no image; ktally read no KTALLY_ variable; a Kubernetes
# Secret's 0440 password file was refused.
# Skipped with one line saying why where podman cannot run a container
# (not installed, a kernel that refuses it) when run alone; under
# scripts/test (KT_CONTAINERS=required, its default) or CI=true that is a
# failure: CI here must run it.
# broker: any — reaches the brokers over the host's network as any client does
source "$(dirname "$0")/lib.sh"
repo=$KT_SRC
# shellcheck source=../../scripts/lib/container.sh
source "$KT_SRC/scripts/lib/container.sh"

cannot() {  # cannot WHY: skip (exit 77) saying why, or fail where containers are required
  if [[ ${CI:-} == true || ${KT_CONTAINERS:-} == required ]]; then
    fail "$1 (KT_CONTAINERS=optional scripts/test lets it skip)"
  fi
  echo "SKIP: $TEST_NAME: $1"; exit 77
}
command -v podman > /dev/null || cannot "podman is not installed (scripts/setup installs it)"
[[ $(id -u) == 0 ]] || cannot "needs root: podman runs the image rootful, with the host's network"

image=localhost/ktally-test:$RUN_ID
names=()
cleanup_containers() {
  for n in "${names[@]}"; do container_podman rm -f -t 0 "$n" > /dev/null 2>&1 || true; done
  container_podman rmi -f "$image" > /dev/null 2>&1 || true
}
trap 'cleanup_containers; kt_cleanup' EXIT

begun=$SECONDS
KT_IMAGE=$image "$KT_SRC/scripts/package" --image --quiet > "$WORK/package.log" 2>&1 \
  || { cat "$WORK/package.log" >&2; fail "scripts/package --image failed"; }
[[ $(tail -1 "$WORK/package.log") == "$image" ]] || fail "scripts/package --image printed: $(tail -1 "$WORK/package.log")"
why=$(container_runs "$image") || cannot "$why"
note "image built in $((SECONDS - begun)) s, $(($(container_podman image inspect -f '{{ .Size }}' "$image") / 1000000)) MB"
[[ $(container_podman image inspect -f '{{ .Config.User }} {{ json .Config.Entrypoint }}' "$image") \
    == '10001:10001 ["/usr/bin/ktally","run"]' ]] \
  || fail "image: $(container_podman image inspect -f '{{ .Config.User }} {{ .Config.Entrypoint }}' "$image")"

db_uri=$(kt_new_db container); db=$(kt_db_name "$db_uri")
topic=$(kt_new_topic container 4)
# The password as README.md mounts it (the user's, 0400), and as a
# Kubernetes Secret with fsGroup 10001 gives it (root's, group 10001, 0440).
printf '%s\n' "$KT_MYSQL_PASSWORD" > "$WORK/pw-podman"
chown 10001:10001 "$WORK/pw-podman"; chmod 0400 "$WORK/pw-podman"
printf '%s\n' "$KT_MYSQL_PASSWORD" > "$WORK/pw-k8s"
chown 0:10001 "$WORK/pw-k8s"; chmod 0440 "$WORK/pw-k8s"
# A ConfigMap's ktally.conf: what the environment does not say.
cat > "$WORK/ktally.conf" <<CONF
[kafka]
brokers = kafka1.example.com:9092
[batch]
interval = 0
max-per-partition = 40
startup-timeout = 30
[log]
log-format = json
CONF
chmod 0644 "$WORK/ktally.conf"

# runit NAME PASSWORD_FILE [podman run args...]: a container in the
# background, as a platform runs it (podman run's pid in $pid); its stdout
# and stderr in $WORK/NAME.*
runit() {
  local name=$1-$RUN_ID pw=$2; shift 2
  names+=("$name")
  container_podman run --name "$name" --network host --pull=never \
    --read-only --read-only-tmpfs=false --cap-drop ALL --security-opt no-new-privileges \
    -v "$WORK/ktally.conf:/etc/ktally/ktally.conf:ro" -v "$pw:/run/secrets/db-password:ro" \
    -e KTALLY_BROKERS="$KT_BROKERS" -e KTALLY_TOPIC="$topic" -e KTALLY_JOB=boxed \
    -e KTALLY_DB="mysql://$KT_MYSQL_USER@$KT_MYSQL_HOST:$KT_MYSQL_PORT/$db" \
    -e KTALLY_DB_PASSWORD_FILE=/run/secrets/db-password -e KTALLY_HTTP=127.0.0.1:0 \
    "$@" "$image" > "$WORK/${name%-"$RUN_ID"}.out" 2> "$WORK/${name%-"$RUN_ID"}.err" &
  pid=$!
  KT_CHILDREN+=("$pid")
}
records() { kt_log_sum batch records "$@"; }

# 1. Probes, metrics, logs, the process as the platform sees it.
kt_gen "$topic" --lines 40000 --seed 260 --truth "$WORK/truth" > "$WORK/gen"
total=$(sed 's/.*messages=\([0-9]*\).*/\1/' "$WORK/gen")
runit first "$WORK/pw-podman"
port=$(kt_http_port "$WORK/first.out") || { cat "$WORK/first.out" "$WORK/first.err" >&2; fail "no http record on stdout"; }
host_pid=$(container_podman inspect -f '{{ .State.Pid }}' "first-$RUN_ID")
[[ $(stat -c %u "/proc/$host_pid") == 10001 ]] || fail "ktally runs as uid $(stat -c %u "/proc/$host_pid")"
grep -q '^NSpid:.*\s1$' "/proc/$host_pid/status" || fail "ktally is not PID 1: $(grep NSpid "/proc/$host_pid/status")"
grep -q '^CapEff:\s*0*$' "/proc/$host_pid/status" && grep -q '^NoNewPrivs:\s*1' "/proc/$host_pid/status" \
  || fail "capabilities or no-new-privileges: $(grep -E 'CapEff|NoNewPrivs' "/proc/$host_pid/status" | tr '\n' ' ')"
probe() { [[ $(curl -s -m 5 -o "$WORK/body" -w '%{http_code}' "http://127.0.0.1:$port$1") == "$2" ]]; }
kt_wait_for 30 probe /livez 200 || fail "/livez: $(cat "$WORK/body")"
kt_wait_for 60 probe /readyz 200 || fail "/readyz: $(cat "$WORK/body")"
probe /metrics 200 && grep -q '^ktally_batches_total' "$WORK/body" || fail "/metrics: $(head -3 "$WORK/body")"

# 2. SIGTERM while the backlog is read in batches of 40 a partition.
kt_gen "$topic" --lines 40000 --seed 261 --truth "$WORK/truth2" > "$WORK/gen2"
total=$((total + $(sed 's/.*messages=\([0-9]*\).*/\1/' "$WORK/gen2")))
read_some() { (($(records "$WORK/first.out") > $1)); }
kt_wait_for 30 read_some "$(records "$WORK/first.out")" || fail "no batch of the second backlog"
stopped=$SECONDS
container_podman stop -t 30 "first-$RUN_ID" > /dev/null
rc=0; wait "$pid" || rc=$?
((rc == 0)) || { tail -5 "$WORK/first.out" >&2; fail "SIGTERM: exit $rc, expected 0"; }
((SECONDS - stopped < 30)) || fail "SIGTERM: $((SECONDS - stopped)) s, past the grace period"
kt_log_match '.event == "signal" and .signal == "SIGTERM"' "$WORK/first.out" || fail "no SIGTERM record"
[[ ! -s $WORK/first.err ]] || { cat "$WORK/first.err" >&2; fail "something on stderr"; }
while read -r line; do
  jq -e 'type == "object" and has("time") and has("level")' <<< "$line" > /dev/null 2>&1 \
    || fail "a line on stdout is no JSON record: $line"
done < "$WORK/first.out"
(($(records "$WORK/first.out") < total)) || fail "the backlog was drained before SIGTERM: nothing was in flight"

# 3. SIGKILL mid-backlog, a Kubernetes Secret's password file.
runit second "$WORK/pw-k8s"
read_second() { (($(records "$WORK/second.out") > 0)); }
kt_wait_for 60 read_second || { cat "$WORK/second.out" "$WORK/second.err" >&2; fail "the second container committed nothing"; }
container_podman kill --signal KILL "second-$RUN_ID" > /dev/null
rc=0; wait "$pid" || rc=$?
((rc == 137)) || fail "SIGKILL: exit $rc, expected 137"
(($(records "$WORK/first.out" "$WORK/second.out") < total)) || fail "drained before SIGKILL"

# ...and a new container drains the rest: exact.
runit third "$WORK/pw-k8s" -e KTALLY_EXIT_WHEN_IDLE=true
rc=0; wait "$pid" || rc=$?
((rc == 0)) || { cat "$WORK/third.out" "$WORK/third.err" >&2; fail "the draining container: exit $rc"; }
kt_sum_truths "$WORK/truth" "$WORK/truth2" > "$WORK/truth-all"
kt_check_counts "$db" "$WORK/truth-all"
high=$(kt_watermarks "$topic" | tr ' ' '\n' | awk -F: '{ s += $3 } END { print s }')
[[ $(kt_offset_sum "$db" boxed) == "$high" ]] || fail "stored offsets $(kt_offset_sum "$db" boxed), high watermarks $high"
"$KTALLY" audit --db "$db_uri" > "$WORK/audit" 2>&1 || { cat "$WORK/audit" >&2; fail "ktally audit"; }

# 4. A password in the environment: refused, never shown.
rc=0
container_podman run --rm --network host --pull=never --read-only --cap-drop ALL \
  -e KTALLY_BROKERS="$KT_BROKERS" -e KTALLY_TOPIC="$topic" -e KTALLY_DB="$db_uri" "$image" \
  > "$WORK/secret.out" 2>&1 || rc=$?
((rc == 2)) && grep -q "KTALLY_DB: holds a secret" "$WORK/secret.out" \
  || { cat "$WORK/secret.out" >&2; fail "a password in KTALLY_DB: exit $rc"; }
! grep -q -- "$KT_MYSQL_PASSWORD" "$WORK/secret.out" || fail "the password shows"

note "$TEST_NAME: probes, JSON on stdout, SIGTERM exit 0, SIGKILL then exact, in $((SECONDS - begun)) s"
