# tests/peers/common/test-lib.sh - what the JVM peers' exactness tests
# (tests/peers/*/test-exact.sh) share, on top of tests/integration/lib.sh,
# which the test sources first: the shape check against ktally's tables and
# records that keep arriving until the kills are done.

peer_check_tables() {  # peer_check_tables DB: error_log and kafka_offset in DB are ktally's
  local shape_uri t a b
  shape_uri=$(kt_new_db peer_shape)
  "$KTALLY" init-db --db "$shape_uri" > "$WORK/init-db.out" 2>&1 \
    || { cat "$WORK/init-db.out" >&2; fail "ktally init-db failed"; }
  for t in error_log kafka_offset; do
    a=$(kt_sql "$1" "SHOW CREATE TABLE $t" | cut -f2)
    b=$(kt_sql "$(kt_db_name "$shape_uri")" "SHOW CREATE TABLE $t" | cut -f2)
    [[ $a == "$b" ]] || fail "the peer's $t differs from ktally's: $a / $b"
  done
}

peer_backlog() {  # peer_backlog TOPIC: 60,000 lines, 3 a record, truth in $WORK/truth.0
  kt_gen "$1" --lines 60000 --lines-per-value 3 --seed "$KT_SEED" \
    --truth "$WORK/truth.0" > "$WORK/gen.0" || fail "kt-gen (backlog) failed"
}

# Live records until $WORK/stop exists, however slow the machine: 2 s
# chunks of 20,000 lines, each with its own seed, start time and truth
# ($WORK/truth.N, its summary in $WORK/gen.N). Sets PEER_GEN_PID.
peer_live_records() {  # peer_live_records TOPIC
  (
    i=1
    while [[ ! -e $WORK/stop ]]; do
      kt_gen "$1" --lines 20000 --lines-per-value 2 --rate 10000 --seed "$((KT_SEED + i))" \
        --start "2017-08-$(printf %02d $((i % 28 + 1))) 09:00:00" --truth "$WORK/truth.$i" > "$WORK/gen.$i" 2>&1 \
        || { echo "kt-gen chunk $i failed: $(cat "$WORK/gen.$i")" >&2; exit 1; }
      i=$((i + 1))
    done
  ) &
  PEER_GEN_PID=$!
  KT_CHILDREN+=("$PEER_GEN_PID")
}

peer_stop_records() {  # peer_stop_records: ends peer_live_records after its chunk
  touch "$WORK/stop"
  wait "$PEER_GEN_PID" || fail "kt-gen (live records) failed"
}

peer_truth() {  # peer_truth: every chunk's truth summed into $WORK/truth
  kt_sum_truths "$WORK"/truth.* > "$WORK/truth"
}

peer_records() {  # peer_records: how many records every kt-gen run produced
  cat "$WORK"/gen.* | sed -n 's/.*messages=\([0-9]*\).*/\1/p' | paste -sd+ | bc
}

peer_build() {  # peer_build VAR: checks what the test needs, builds the peer of the
                # test's folder ($here) and exports VAR, the directory it built into
  [[ ${KT_KAFKA:-} == apache ]] \
    || fail "needs Apache Kafka (KT_KAFKA=apache, got '${KT_KAFKA:-mock}'): scripts/services start --kafka apache"
  [[ -x $KT_GEN ]] || fail "kt-gen is not built at $KT_GEN (meson compile -C $KT_BUILD)"
  [[ -x $KTALLY ]] || fail "ktally is not built at $KTALLY (meson compile -C $KT_BUILD)"
  "$here/build" > "$WORK/build.out" || fail "tests/peers/$(basename "$here")/build failed"
  export "$1=$(tail -1 "$WORK/build.out")"
}

# The peer under test: $here/run on $topic and $db_uri (the test sets
# them), with PEER_ARGS (e.g. its checkpoint directory) on every start.
PEER_PID=
PEER_ARGS=()
peer_start() {  # peer_start LOG ARGS...: the peer in the background, stderr to LOG
  local log=$1; shift
  "$here/run" --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" "${PEER_ARGS[@]}" "$@" \
    2>> "$log" &
  PEER_PID=$!
  KT_CHILDREN+=("$PEER_PID")
}

peer_alive() {  # peer_alive LOG: the peer still runs (else fail with its log's end)
  kill -0 "$PEER_PID" 2> /dev/null || { tail -5 "$1" >&2; fail "the peer exited early (log $1)"; }
}
