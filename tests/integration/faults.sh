# tests/integration/faults.sh - helpers for the fault-injection scenarios
# (7*-fault-*.sh). Source it after lib.sh.
#
# A scenario produces data with a known truth, keeps ktally running under
# a supervisor (as a service manager would: every exit is recorded with its
# status and the process is started again), injects faults, and checks the
# end state with kt_fault_verify. Whatever the scenario breaks (a broker
# down, an rtt, queued request errors, a dead MariaDB) is repaired on exit,
# so that a failing scenario does not take the next test down with it. On
# failure the logs are kept and the tail of each ktally log is printed.

# The sink mode under test; every scenario passes --mode "$KT_MODE", and
# --log-format json: the figures below come from the records' fields.
KT_MODE=${KT_MODE:-transactional}

declare -A KT_SUP=()       # supervisor name -> pid of its loop
KT_FAULT_BROKERS=no        # set to yes once the broker was tampered with
KT_FAULT_MYSQL=no          # set to yes once MariaDB was killed
KT_FAULT_APACHE=no         # set to yes once an Apache Kafka broker was killed or paused
trap 'kt_fault_cleanup' EXIT

kt_fault_cleanup() {
  local rc=$? name pid keep
  # Supervisors first, so that none starts another ktally.
  for name in "${!KT_SUP[@]}"; do
    : > "$WORK/$name.stop"
    kill -9 "${KT_SUP[$name]}" 2>/dev/null || true
  done
  for name in "${!KT_SUP[@]}"; do
    pid=$(kt_sup_pid "$name") && kill -9 "$pid" 2>/dev/null || true
  done
  if [[ $KT_FAULT_BROKERS == yes ]]; then
    kt_ctl up -1 > /dev/null 2>&1 || true
    kt_ctl rtt -1 0 > /dev/null 2>&1 || true
    for api in Fetch ListOffsets Metadata; do kt_ctl clear "$api" > /dev/null 2>&1 || true; done
  fi
  if [[ $KT_FAULT_APACHE == yes ]]; then
    # Every node resumed, and any dead one started again (start waits for all).
    for ((n = 1; n <= KT_KAFKA_NODES; n++)); do
      "$KT_SERVICES" resume-broker "$n" > /dev/null 2>&1 || true
    done
    "$KT_SERVICES" start > /dev/null 2>&1 || echo "$TEST_NAME: could not start the Kafka brokers again" >&2
  fi
  if [[ $KT_FAULT_MYSQL == yes ]] && ! kt_mysql_up; then
    "$KT_SERVICES" start > /dev/null 2>&1 || echo "$TEST_NAME: could not restart MariaDB" >&2
  fi
  if ((rc != 0)); then
    for log in "$WORK"/*.log; do
      [[ -e $log ]] || continue
      echo "--- last lines of $(basename "$log"):" >&2
      tail -n 15 "$log" >&2
    done
    keep=${TMPDIR:-/tmp}/kt-failed-$TEST_NAME-$KT_SEED
    rm -rf "$keep"; cp -a "$WORK" "$keep" 2>/dev/null \
      && echo "$TEST_NAME: logs kept in $keep (rerun with KT_SEED=$KT_SEED)" >&2
  fi
  # KT_KEEP=DIR keeps the logs of a passing run too (for looking at them).
  if [[ -n ${KT_KEEP:-} ]]; then cp -a "$WORK" "$KT_KEEP" 2>/dev/null || true; fi
  kt_cleanup
}

kt_gen_messages() {  # kt_gen_messages SUMMARY...: total messages= of kt-gen summaries
  sed -n 's/.*messages=\([0-9]*\).*/\1/p' "$@" | awk '{ s += $1 } END { print s + 0 }'
}

kt_sleep_ms() {  # kt_sleep_ms MIN MAX: a seeded random pause in [MIN, MAX) ms
  local ms=$(($1 + $(kt_rand $(($2 - $1)))))
  sleep "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))"
}

kt_mysql_up() {
  mariadb-admin --no-defaults -h "$KT_MYSQL_HOST" -P "$KT_MYSQL_PORT" -u "$KT_MYSQL_USER" \
    -p"$KT_MYSQL_PASSWORD" --connect-timeout=2 ping > /dev/null 2>&1
}

kt_offsets_reach() {  # kt_offsets_reach DB JOB N: true once the stored offsets add up to N
  [[ $(kt_offset_sum "$1" "$2" 2>/dev/null) == "$3" ]]
}

kt_epoch() { date +%s.%N; }

# ---------------------------------------------------------------------------
# The supervisor: $WORK/NAME.log (ktally's stderr, appended), NAME.pid (the
# running ktally), NAME.exits (one "STATUS EPOCH" line per exit).

kt_supervise() {  # kt_supervise NAME ARGS...: keeps `ktally ARGS...` running
  local name=$1; shift
  rm -f "$WORK/$name.stop"
  : > "$WORK/$name.exits"; : > "$WORK/$name.pid"
  (
    trap - EXIT
    set +e
    while [[ ! -e $WORK/$name.stop ]]; do
      "$KTALLY" "$@" 2>> "$WORK/$name.log" &
      echo $! > "$WORK/$name.pid.new" && mv -f "$WORK/$name.pid.new" "$WORK/$name.pid"
      wait $!
      echo "$? $(kt_epoch)" >> "$WORK/$name.exits"
      # Restart at once after a kill; a process that fails by itself
      # gets a short pause, like a service manager's restart delay.
      [[ $(tail -n 1 "$WORK/$name.exits") == 137\ * ]] || sleep 0.2
    done
  ) &
  KT_SUP[$name]=$!
  KT_CHILDREN+=($!)
  kt_wait_for 10 kt_sup_pid "$name" > /dev/null || fail "supervisor $name started nothing"
}

kt_sup_pid() {  # kt_sup_pid NAME: the pid of NAME's ktally (empty: none yet)
  local pid
  pid=$(cat "$WORK/$1.pid" 2>/dev/null) || return 1
  [[ -n $pid ]] && echo "$pid"
}

kt_sup_restarted() {  # kt_sup_restarted NAME OLDPID: a new ktally runs
  local pid
  pid=$(kt_sup_pid "$1") && [[ $pid != "$2" ]]
}

kt_sup_kill9() {  # kt_sup_kill9 NAME: kill -9 its ktally, wait for the next one
  local pid
  pid=$(kt_sup_pid "$1") || return 0
  kill -9 "$pid" 2>/dev/null || true
  kt_wait_for 10 kt_sup_restarted "$1" "$pid" || fail "supervisor $1 did not restart ktally"
}

kt_stacks() {  # kt_stacks PID WHAT: where a stuck ktally is, on stderr (needs gdb)
  command -v gdb > /dev/null || return 0
  timeout 60 gdb -p "$1" -batch -ex 'thread apply all bt' > "$WORK/stacks.$1" 2>&1 || true
  echo "--- $2: ktally (pid $1) main thread:" >&2
  awk '/^Thread 1 /{ on = 1 } on && /^#/ { print } on && /^$/ { exit }' "$WORK/stacks.$1" \
    | sed 's/ (.*) at / at /' | head -20 >&2
}

kt_sup_stuck() {  # kt_sup_stuck NAME WHAT: kt_stacks of NAME's ktally, then fail with WHAT
  local pid
  pid=$(kt_sup_pid "$1") && kill -0 "$pid" 2>/dev/null && kt_stacks "$pid" "$1"
  fail "$2"
}

kt_sup_stop() {  # kt_sup_stop NAME: SIGTERM, no restart; fails unless it ends within 30 s
  local name=$1 sup=${KT_SUP[$1]} deadline=$((SECONDS + 30)) pid
  : > "$WORK/$name.stop"
  while kill -0 "$sup" 2>/dev/null; do
    if ((SECONDS >= deadline)); then
      pid=$(kt_sup_pid "$name") && kt_stacks "$pid" "$name"
      fail "ktally ($name) did not stop within 30 s of SIGTERM"
    fi
    pid=$(kt_sup_pid "$name") && kill -TERM "$pid" 2>/dev/null || true
    sleep 0.2
  done
  wait "$sup" 2>/dev/null || true
  # The last exit answers our SIGTERM: 0, or 143 when it came before ktally
  # installed its handler.
  local last; last=$(tail -n 1 "$WORK/$name.exits" | cut -d' ' -f1)
  [[ $last == 0 || $last == 143 ]] || fail "ktally ($name) answered SIGTERM with exit $last"
  sed -i '$d' "$WORK/$name.exits"
}

kt_sup_count() {  # kt_sup_count NAME STATUS: exits of NAME with STATUS
  awk -v s="$2" '$1 == s { n++ } END { print n + 0 }' "$WORK/$1.exits"
}

# kt_sup_check NAME: the exits other than our kill -9 (137) are allowed
# only as a non-zero status other than data loss (4) or usage (2) and not
# from a signal: prints how many there were, with their statuses.
kt_sup_check() {
  local name=$1 rc at bad=0 n=0 codes=""
  while read -r rc at; do
    case $rc in
      137) ;;
      0) echo "ktally ($name) exited 0 unasked" >&2; bad=1 ;;
      2|4) echo "ktally ($name) exited $rc" >&2; bad=1 ;;
      *) if ((rc >= 128)); then echo "ktally ($name) died of signal $((rc - 128))" >&2; bad=1; fi
         n=$((n + 1)); codes+=" $rc" ;;
    esac
  done < "$WORK/$name.exits"
  if ((bad)); then
    kt_exit_lines "$WORK/$name.log" | sort | uniq -c | head >&2
    fail "ktally ($name) exited in a way that is not allowed"
  fi
  echo "$n${codes:+ (exit$codes)}"
}

kt_sup_exit_reasons() {  # kt_sup_exit_reasons NAME: ktally's own last words, counted
  kt_exit_lines "$WORK/$1.log" | sed 's/[0-9]\{2,\}/N/g' | sort | uniq -c | sort -rn | head -5
}

kt_exit_lines() {  # kt_exit_lines LOG: the errors that ended each process, "ktally: ..."
  jq -Rr 'if startswith("ktally: ") then . else
            (fromjson? | objects | select(.event == "exit") | "ktally: " + .message) end' "$1"
}

# ---------------------------------------------------------------------------

# kt_fault_verify DB JOB TRUTH MESSAGES ARGS...: a last `ktally ARGS...
# --exit-when-idle` exits 0 within 60 s, then error_log equals TRUTH, the
# stored offsets add up to MESSAGES (nothing missing, nothing twice) and
# `ktally audit` finds the committed batches one unbroken chain.
kt_fault_verify() {
  local db=$1 job=$2 truth=$3 messages=$4 rc=0 got; shift 4
  timeout 60 "$KTALLY" "$@" --exit-when-idle 2> "$WORK/final.log" || rc=$?
  ((rc == 0)) || { tail -5 "$WORK/final.log" >&2; fail "the final --exit-when-idle run exited $rc"; }
  kt_check_counts "$db" "$truth"
  got=$(kt_offset_sum "$db" "$job")
  [[ $got == "$messages" ]] || fail "stored offsets add up to $got, produced $messages messages"
  if declare -F kt_audit > /dev/null; then kt_audit "$KT_DB_URI_BASE/$db"; fi
}

kt_commits() {  # kt_commits LOG...: committed batches
  kt_log_count batch "$@"
}

kt_lives_with_commits() {  # kt_lives_with_commits LOG: processes that committed before they ended
  jq -Rn '[inputs | fromjson? | objects | .event]
          | reduce .[] as $e ({n: 0, c: false};
              if $e == "start" then {n: (.n + (if .c then 1 else 0 end)), c: false}
              elif $e == "batch" then .c = true else . end)
          | .n + (if .c then 1 else 0 end)' "$1"
}

# A feeder: data that keeps arriving for as long as a phase of the test
# lasts, however long that is. Back-to-back kt-gen chunks (CHUNK lines at
# RATE lines/s, a seed each), until kt_feed_stop; then $WORK/NAME.truth is
# their summed truth and $WORK/NAME.messages their message count.
kt_feed_start() {  # kt_feed_start NAME TOPIC CHUNK RATE [KT-GEN ARGS...]
  local name=$1 topic=$2 chunk=$3 rate=$4; shift 4
  mkdir -p "$WORK/$name.d"; rm -f "$WORK/$name.stop"
  (
    trap - EXIT
    local i=0
    while [[ ! -e $WORK/$name.stop ]]; do
      i=$((i + 1))
      kt_gen "$topic" --lines "$chunk" --rate "$rate" --seed $((KT_SEED * 1000 + i)) \
        --lines-per-value $((1 + i % 3)) --start "2017-07-30 $((10 + i % 12)):00:00" \
        --truth "$WORK/$name.d/$i.truth" "$@" > "$WORK/$name.d/$i.gen" 2> "$WORK/$name.d/$i.err" \
        || { echo "chunk $i (seed $((KT_SEED * 1000 + i)))" >> "$WORK/$name.failed"; exit 1; }
    done
  ) &
  KT_SUP[$name-feed]=$!  # killed on exit like a supervisor
  KT_CHILDREN+=($!)
}

kt_feed_stop() {  # kt_feed_stop NAME: lets the chunk in flight finish
  local name=$1
  : > "$WORK/$name.stop"
  wait "${KT_SUP[$name-feed]}" 2>/dev/null || true
  unset "KT_SUP[$name-feed]"
  if [[ -e $WORK/$name.failed ]]; then
    cat "$WORK/$name.d"/*.err >&2
    fail "the feeder $name failed: $(cat "$WORK/$name.failed")"
  fi
  kt_sum_truths "$WORK/$name.d"/*.truth > "$WORK/$name.truth"
  kt_gen_messages "$WORK/$name.d"/*.gen > "$WORK/$name.messages"
  cat "$WORK/$name.d"/*.gen | sed -n 's/^lines=\([0-9]*\).*/\1/p' | awk '{ s += $1 } END { print s + 0 }' > "$WORK/$name.lines"
}

kt_high_sum() {  # kt_high_sum TOPIC: the sum of its high watermarks (what the topic holds)
  local reply tries
  for ((tries = 0; tries < 5; tries++)); do
    # The ctl's own ListOffsets may meet an injected error: ask again.
    if reply=$(kt_ctl watermarks "$1" 2>/dev/null) && [[ $reply == ok\ * ]]; then
      echo "${reply#ok }" | tr ' ' '\n' | awk -F: '{ s += $3 } END { print s + 0 }'
      return 0
    fi
    sleep 0.5
  done
  fail "cannot read the watermarks of $1"
}

# kt_reference_truth TOPIC FILE: the per-minute truth of what TOPIC holds,
# from a plain ktally run into a fresh database. For when the topic holds
# more than the generators reported: a producer retry that the mock broker
# stored twice, during a broker outage.
kt_reference_truth() {
  local ref_uri ref
  ref_uri=$(kt_new_db ref); ref=$(kt_db_name "$ref_uri")
  timeout 60 "$KTALLY" run --brokers "$KT_BROKERS" --topic "$1" --db "$ref_uri" --interval 0 \
    --exit-when-idle 2> "$WORK/reference.log" || fail "the reference run failed"
  kt_sql "$ref" "SELECT log_time, log_count FROM error_log ORDER BY log_time" > "$2"
}
