#!/usr/bin/env bash
# --dead-letters keeps each malformed line exactly once. Hostile values
# (tests/corpus/: NUL bytes, invalid UTF-8, impossible dates; CRLF lines; a
# 4 MB malformed line; lines of every reason) and kt-gen's malformed lines,
# in both modes, with ktally killed -9 at random while it reads: the table
# must hold exactly the malformed lines an independent oracle finds in the
# records (tests/support/kt-malformed.py over tests/history/lines.py), by
# topic, partition, offset and line number, with their bytes (cut at 2048,
# raw_bytes the whole length), no more, no fewer; the audit rows' malformed
# lines must add up to its rows; and in every consistent snapshot taken
# while a job runs, it holds exactly the lines below the stored offsets
# (the batch's transaction). A replay of everything into another
# table, keeping into the same dead-letter table, adds no row (and one into
# a table of its own finds them all); an idempotent rewind and a rebuild,
# read again, add none. --dead-letters-max bounds a batch's lines, the rest
# counted in the batch's log record. A view, a table of another shape,
# ktally's own names, the job's own table are refused in one line. Red
# before: --dead-letters did not exist; red if the lines were written
# outside the batch's transaction (kill -9 would lose or add some) or
# without their key (a rewind would add them again).
# broker: any — uses Kafka as any client does (topics made with kt_new_topic; a 4 MB record needs max.message.bytes on Apache Kafka)
source "$(dirname "$0")/lib.sh"

corpus=$KT_SRC/tests/corpus
if [[ $KT_KAFKA == apache ]]; then
  topic=$(kt_new_topic dead_letters 3 --config max.message.bytes=20000000)
else
  topic=$(kt_new_topic dead_letters 3)
fi
produce() { kcat -b "$KT_BROKERS" -P -t "$topic" -p "$1" -X message.max.bytes=20000000 "${@:2}" || fail "kcat -P $*"; }
for f in "$corpus"/*.txt; do produce 0 "$f"; done
printf '2017-07-30 14:00:00 ERROR fine\r\nno timestamp at all\r\n\r\n2017-02-30 10:00:00 ERROR no such day\r\n0999-12-31 23:59:00 ERROR before DATETIME\n' > "$WORK/reasons"
produce 1 "$WORK/reasons"
head -c 4194304 /dev/zero | tr '\0' 'y' > "$WORK/4mb"   # one malformed line of 4 MB
produce 2 "$WORK/4mb"
kt_gen "$topic" --lines 4000 --malformed 80 --lines-per-value 3 --seed "$KT_SEED" > /dev/null \
  || fail "kt-gen failed"
/usr/bin/python3 "$KT_SRC/tests/support/kt-malformed.py" --brokers "$KT_BROKERS" --topic "$topic" \
  > "$WORK/want.tsv" || fail "the oracle failed"
want=$(wc -l < "$WORK/want.tsv")
((want > 100)) || fail "the oracle finds only $want malformed lines"

check_dead() {  # check_dead DB TABLE WHAT: TABLE holds exactly the oracle's lines
  kt_sql "$1" "SELECT topic, \`partition\`, \`offset\`, line_no, HEX(raw), raw_bytes FROM $2 ORDER BY 1, 2, 3, 4" \
    > "$WORK/got.tsv"
  if ! cmp -s "$WORK/got.tsv" "$WORK/want.tsv"; then
    diff "$WORK/got.tsv" "$WORK/want.tsv" | cut -c1-160 | head -10 >&2 || true
    fail "$3: $2 holds $(wc -l < "$WORK/got.tsv") lines, the oracle $want"
  fi
}
high=$(kt_watermarks "$topic" | tr ' ' '\n' | awk -F: '{ printf "%s%d:%d", (NR > 1 ? "," : ""), $1, $3 }')

# 0. The same transaction: at every moment, in one consistent snapshot,
#    a transactional job's table holds exactly the malformed lines below
#    its stored offsets (lines written after the commit, or before it
#    outside it, show as a snapshot where the two disagree).
db_uri=$(kt_new_db dead_live); db=$(kt_db_name "$db_uri")
"$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --dead-letters dl \
  --interval 0 --max-per-partition 5 2> "$WORK/live.log" &
live=$!
KT_CHILDREN+=("$live")
records=$(kt_watermarks "$topic" | tr ' ' '\n' | awk -F: '{ n += $3 - $2 } END { print n }')
snapshots=$(/usr/bin/python3 - "$db" "$topic" "$records" "$WORK/want.tsv" <<'PY'
import sys, time, MySQLdb, os
db, topic, records, want_file = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
want = [l.split("\t") for l in open(want_file).read().splitlines()]
want = [(int(p), int(o), int(n)) for _, p, o, n, _, _ in want]
c = MySQLdb.connect(host=os.environ["KT_MYSQL_HOST"], port=int(os.environ["KT_MYSQL_PORT"]),
                    user=os.environ["KT_MYSQL_USER"], passwd=os.environ["KT_MYSQL_PASSWORD"], db=db)
cur = c.cursor()
n, deadline = 0, time.time() + 120
while time.time() < deadline:
    try:
        cur.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
        cur.execute("SELECT `partition`, `offset` FROM kafka_offset WHERE job = %s", (topic,))
        stored = {int(p): int(o) for p, o in cur.fetchall()}
        cur.execute("SELECT `partition`, `offset`, line_no FROM dl")
        got = sorted((int(p), int(o), int(l)) for p, o, l in cur.fetchall())
        cur.execute("COMMIT")
    except (MySQLdb.ProgrammingError, MySQLdb.OperationalError):  # tables not there, or new
        cur.execute("ROLLBACK")
        time.sleep(0.01)
        continue
    below = sorted(w for w in want if w[1] < stored.get(w[0], 0))
    if got != below:
        sys.exit("a snapshot with offsets %s holds %d malformed lines, not the %d below them "
                 "(e.g. %s)" % (stored, len(got), len(below), sorted(set(got) ^ set(below))[:3]))
    n += 1
    if sum(stored.values()) >= records:
        print(n)
        sys.exit(0)
sys.exit("the job did not reach the end in 120 s (%d snapshots)" % n)
PY
) || fail "the dead-letter table and the offsets disagreed in a snapshot: $snapshots"
kt_stop "$live" || fail "the live job did not stop cleanly"
((snapshots >= 20)) || fail "only $snapshots snapshots taken"
note "$snapshots consistent snapshots: the lines kept are always those below the offsets"

for mode in transactional idempotent; do
  db_uri=$(kt_new_db "dead_$mode"); db=$(kt_db_name "$db_uri")
  run=("$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --mode "$mode"
       --dead-letters dl --interval 0 --max-per-partition 40 --log-format json)
  # 1. Killed -9 at random while it reads, then to the end.
  kills=0
  for i in 1 2 3 4 5 6; do
    kt_kill9 150 600 "$WORK/$mode.log" "${run[@]}" && kills=$((kills + 1))
  done
  "${run[@]}" --exit-when-idle 2>> "$WORK/$mode.log" || { tail -5 "$WORK/$mode.log" >&2; fail "$mode: the last run failed"; }
  check_dead "$db" dl "$mode after $kills kill -9"
  recorded=$(kt_sql "$db" "SELECT SUM(malformed_lines) FROM ktally_batches")
  [[ $recorded == "$want" ]] || fail "$mode: the audit rows record $recorded malformed lines, the table holds $want"
  kt_audit "$db_uri"
  # The reasons of the lines whose reason is known.
  reasons=$(kt_sql "$db" "SELECT reason FROM dl WHERE topic = '$topic' AND \`partition\` = 1 AND \`offset\` = 0 ORDER BY line_no" | tr '\n' ' ')
  [[ $reasons == "shape time range " ]] || fail "$mode: the reasons of partition 1's lines are '$reasons'"
  [[ $(kt_sql "$db" "SELECT COUNT(DISTINCT job) FROM dl") == 1 ]] || fail "$mode: rows of several jobs?"

  # 2. Read again: a replay into another table keeping into dl adds
  #    nothing; one into a table of its own finds every line.
  "$KTALLY" replay --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --table again \
    --from 0:0,1:0,2:0 --until "$high" --dead-letters dl 2>> "$WORK/$mode.log" || fail "$mode: the replay failed"
  check_dead "$db" dl "$mode after a replay"
  [[ $(kt_sql "$db" "SELECT COUNT(DISTINCT job) FROM dl") == 1 ]] || fail "$mode: the replay rewrote rows"
  "$KTALLY" replay --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --table again2 \
    --from 0:0,1:0,2:0 --until "$high" --dead-letters dl2 2>> "$WORK/$mode.log" || fail "$mode: the replay failed"
  check_dead "$db" dl2 "$mode, a replay's own dead-letter table"

  # 3. Rewound: read again, nothing added.
  reset=("$KTALLY" reset --brokers "$KT_BROKERS" --db "$db_uri" --job "$topic" --to earliest --execute)
  if [[ $mode == idempotent ]]; then
    "${reset[@]}" > /dev/null || fail "$mode: the rewind failed"
    "${run[@]}" --exit-when-idle 2>> "$WORK/$mode.log" || fail "$mode: the run after the rewind failed"
    check_dead "$db" dl "$mode after a rewind"
  fi
  "${reset[@]}" --rebuild > /dev/null || fail "$mode: the rebuild failed"
  "${run[@]}" --exit-when-idle 2>> "$WORK/$mode.log" || fail "$mode: the run after the rebuild failed"
  check_dead "$db" dl "$mode after a rebuild"
  note "$mode: $want malformed lines kept once through $kills kill -9, a replay, a rewind and a rebuild"
done

# 4. The bound: at most N a batch, the rest counted.
db_uri=$(kt_new_db dead_bound); db=$(kt_db_name "$db_uri")
"$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --dead-letters dl --dead-letters-max 2 \
  --interval 0 --max-per-partition 40 --exit-when-idle --log-format json 2> "$WORK/bound.log" \
  || fail "the bounded run failed"
kt_log_match 'select(.event == "batch") | .dead_letters > 2' "$WORK/bound.log" && fail "a batch kept more than 2 lines"
kt_log_match 'select(.event == "batch") | .dead_letters + .dead_letters_dropped != .malformed' "$WORK/bound.log" \
  && fail "a batch's kept and dropped lines do not add up to its malformed ones"
kept=$(kt_log_sum batch dead_letters "$WORK/bound.log")
dropped=$(kt_log_sum batch dead_letters_dropped "$WORK/bound.log")
[[ $(kt_sql "$db" "SELECT COUNT(*) FROM dl") == "$kept" ]] || fail "the table does not hold the $kept lines kept"
((dropped > 0 && kept + dropped == want)) || fail "kept $kept and dropped $dropped of $want"

# 5. What is refused, in one line, before anything is written.
db_uri=$(kt_new_db dead_refused); db=$(kt_db_name "$db_uri")
kt_sql "$db" "CREATE TABLE other (id INT PRIMARY KEY); CREATE VIEW seen AS SELECT 1 AS x"
refused() {  # refused WHAT ARGS...
  local what=$1 rc=0; shift
  "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --exit-when-idle "$@" \
    > "$WORK/out" 2> "$WORK/err" || rc=$?
  ((rc == 2)) || { cat "$WORK/err" >&2; fail "run $* exited $rc, not 2"; }
  [[ $(grep -c . "$WORK/err") == 1 ]] || { cat "$WORK/err" >&2; fail "run $*: not one line"; }
  grep -qF -- "$what" "$WORK/err" || { cat "$WORK/err" >&2; fail "run $*: does not say '$what'"; }
}
refused "seen is a view" --dead-letters seen
refused "table other is not the shape ktally writes: column topic is missing" --dead-letters other
refused "--dead-letters: kafka_offset is the name of one of ktally's own tables" --dead-letters kafka_offset
refused "--dead-letters: 'a-b' is not a table name" --dead-letters a-b
refused "--dead-letters-max needs --dead-letters" --dead-letters-max 5
refused "--dead-letters: error_log is the job's own count table" --dead-letters error_log
[[ $(kt_sql "$db" "SELECT COUNT(*) FROM kafka_offset" 2> /dev/null || echo 0) == 0 ]] || fail "a refused run stored offsets"
