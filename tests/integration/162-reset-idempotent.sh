#!/usr/bin/env bash
# `ktally reset` of idempotent jobs: any rewind is harmless, and the plan
# says so from ktally_coverage. Rewinds (earliest, PARTITION:OFFSET,
# batch:ID) executed between kill -9s of a running instance and while one
# runs, as data flows: the counts equal kt-gen's truth, the audit passes.
# A move forward skips offsets that a later rewind counts after all. A job
# whose offsets live in Kafka has its consumer group's offsets moved (and
# is told that this is not fenced), and forget refuses it while the group
# holds offsets.
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

db_uri=$(kt_new_db reset_idem); db=$(kt_db_name "$db_uri")
topic=$(kt_new_topic reset_idem 3)
reset() { "$KTALLY" reset --brokers "$KT_BROKERS" --db "$db_uri" --job "$topic" "$@"; }
json() {  # json FILE EXPR: a Python expression over the document `d`
  /usr/bin/python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@"
}
run_bg() {
  "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --mode idempotent \
    --interval 0.05 --max-per-partition 400 2>> "$WORK/run.log" &
  run=$!; KT_CHILDREN+=("$run")
}
idle() {
  timeout 60 "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --mode idempotent \
    --interval 0 --exit-when-idle "$@" 2>> "$WORK/run.log" || { tail -5 "$WORK/run.log" >&2; fail "run $* failed"; }
}

# 1. A rewind over counted offsets: the plan says they are counted already.
kt_gen "$topic" --lines 3000 --seed 1620 --truth "$WORK/a.truth" > /dev/null || fail "kt-gen failed"
idle
reset --to earliest --json > "$WORK/p.json" || fail "the dry run failed"
[[ $(json "$WORK/p.json" '[(p["move"], p["counted_already"], p["newly_counted"], p["skipped"]) for p in d["partitions"]]') \
   == "[('back', [[0, 1000]], [], []), ('back', [[0, 1000]], [], []), ('back', [[0, 1000]], [], [])]" ]] \
  || { cat "$WORK/p.json" >&2; fail "the plan of a rewind does not say the offsets are counted"; }
reset --to earliest | grep -q "back: \[0, 1000) read again: counted already, not counted twice" \
  || fail "the text plan does not say it"

# 2. Forward, then back below it: what was skipped is counted after all.
kt_gen "$topic" --lines 300 --seed 1621 --start "2018-01-01 00:00:00" --truth "$WORK/b.truth" > /dev/null \
  || fail "kt-gen failed"
reset --to latest --execute > "$WORK/fwd" || fail "reset forward failed"
grep -q "forward: offsets \[1000, 1100) will never be counted" "$WORK/fwd" || { cat "$WORK/fwd" >&2; fail "forward: what is skipped"; }
idle
kt_check_counts "$db" "$WORK/a.truth"
reset --to 0:500,1:1000,2:1050 --execute --json > "$WORK/back.json" || fail "reset back failed"
[[ $(json "$WORK/back.json" '[(p["counted_already"], p["newly_counted"]) for p in d["partitions"]]') \
   == "[([[500, 1000]], [[1000, 1100]]), ([], [[1000, 1100]]), ([], [[1050, 1100]])]" ]] \
  || { cat "$WORK/back.json" >&2; fail "the plan back over skipped offsets"; }
idle
kt_sum_truths "$WORK/a.truth" "$WORK/b.truth" > "$WORK/ab.truth"
# Partition 2 went back to 1050 only: [1000, 1050) stays skipped. Count it
# by replay, to add it to what error_log holds.
"$KTALLY" replay --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --from 2:1000 --until 2:1050 \
  --table skipped 2>> "$WORK/run.log" || fail "replay failed"
kt_sql "$db" "SELECT log_time, log_count FROM error_log" > "$WORK/counted.tsv"
kt_sql "$db" "SELECT log_time, log_count FROM skipped" > "$WORK/skipped.tsv"
kt_sum_truths "$WORK/counted.tsv" "$WORK/skipped.tsv" | diff -q - "$WORK/ab.truth" > /dev/null \
  || fail "forward then back: error_log + the one range still skipped differ from the truth"
reset --to earliest --execute > /dev/null || fail "reset to earliest failed"
idle
kt_check_counts "$db" "$WORK/ab.truth"
kt_audit "$db_uri"

# 3. Rewinds between kill -9s and under a live run, as data flows.
kt_gen "$topic" --lines 30000 --seed 1622 --rate 6000 --start "2019-01-01 00:00:00" \
  --truth "$WORK/c.truth" > /dev/null &
gen=$!; KT_CHILDREN+=("$gen")
kills=0; live=0; rewinds=0
while kill -0 "$gen" 2> /dev/null; do
  run_bg
  sleep "0.$((2 + $(kt_rand 6)))"
  case $(kt_rand 3) in
    0) to=earliest ;;
    1) p=$(kt_rand 3); to=$p:$(kt_sql "$db" "SELECT FLOOR(\`offset\` * RAND()) FROM kafka_offset
                                             WHERE job = '$topic' AND \`partition\` = $p") ;;
    2) to=batch:$(kt_sql "$db" "SELECT id FROM ktally_batches WHERE job = '$topic' ORDER BY RAND() LIMIT 1") ;;
  esac
  if (($(kt_rand 2))); then
    reset --to "$to" --execute > /dev/null 2>> "$WORK/reset.log" || fail "reset --to $to under a live run failed"
    live=$((live + 1))
  fi
  kill -9 "$run"; wait "$run" 2> /dev/null || true
  kills=$((kills + 1))
  reset --to "$to" --execute > /dev/null 2>> "$WORK/reset.log" || fail "reset --to $to failed"
  rewinds=$((rewinds + 1))
done
wait "$gen" || fail "kt-gen failed"
idle
kt_sql "$db" "SELECT log_time, log_count FROM error_log" \
  | diff - <(kt_sum_truths "$WORK/ab.truth" "$WORK/c.truth") > "$WORK/diff" \
  || { head "$WORK/diff" >&2; fail "after $rewinds rewinds and $kills kills the counts differ"; }
kt_audit "$db_uri"

# 4. Offsets in Kafka: the group's offsets move; not fenced, and said so.
kdb_uri=$(kt_new_db reset_idem_k); kdb=$(kt_db_name "$kdb_uri")
kjob=k$RUN_ID
kidle() {
  timeout 60 "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$kdb_uri" --mode idempotent \
    --offsets kafka --job "$kjob" --interval 0 --exit-when-idle 2>> "$WORK/k.log" || fail "kafka run failed"
}
kidle
"$KTALLY" reset --brokers "$KT_BROKERS" --db "$kdb_uri" --job "$kjob" --to 1:100 --execute > "$WORK/k.out" \
  || fail "reset of a --offsets kafka job failed"
grep -q "committed to Kafka's consumer group ktally-$kjob; this is not fenced" "$WORK/k.out" \
  || { cat "$WORK/k.out" >&2; fail "the reset does not say it is not fenced"; }
"$KTALLY" status --brokers "$KT_BROKERS" --topic "$topic" --db "$kdb_uri" --job "$kjob" --json > "$WORK/ks.json" \
  || fail "status failed"
[[ $(json "$WORK/ks.json" '[p["stored"] for p in d["partitions"]][1]') == 100 ]] || fail "the group's offset did not move"
kidle
kt_check_counts "$kdb" <(kt_sum_truths "$WORK/ab.truth" "$WORK/c.truth")
"$KTALLY" audit --db "$kdb_uri" --brokers "$KT_BROKERS" > "$WORK/ka" 2>&1 || { cat "$WORK/ka" >&2; fail "audit --brokers failed"; }
rc=0; "$KTALLY" forget --brokers "$KT_BROKERS" --db "$kdb_uri" --job "$kjob" --execute > /dev/null 2> "$WORK/kf" || rc=$?
((rc == 2)) && grep -q "still holds offsets of $topic: delete the group first" "$WORK/kf" \
  || { cat "$WORK/kf" >&2; fail "forget of a --offsets kafka job whose group holds offsets: exit $rc"; }
[[ $(kt_sql "$kdb" "SELECT COUNT(*) FROM ktally_coverage") == 3 ]] || fail "the refused forget changed something"
# A rebuild refused (an earlier job of its name was forgotten: its rows
# hold that job's counts too, as forget leaves them) is refused before the
# group's offsets move, and its dry run refuses alike. Before, the offsets
# were committed to the group first, then the rebuild refused (exit 2).
kstored() {
  "$KTALLY" status --brokers "$KT_BROKERS" --topic "$topic" --db "$kdb_uri" --job "$kjob" --json \
    > "$WORK/ks.json" || fail "status failed"
  json "$WORK/ks.json" 'sum(p["stored"] for p in d["partitions"])'
}
stored=$(kstored)
kt_sql "$kdb" "INSERT INTO ktally_forgotten (job, target, batches, error_lines) VALUES ('$kjob', 'error_log', 1, 1)"
rc=0; "$KTALLY" reset --brokers "$KT_BROKERS" --db "$kdb_uri" --job "$kjob" --to earliest --rebuild --execute \
  > /dev/null 2> "$WORK/krb" || rc=$?
((rc == 2)) && grep -q "also hold the counts of an earlier job $kjob that was forgotten" "$WORK/krb" \
  || { cat "$WORK/krb" >&2; fail "a --offsets kafka rebuild over a forgotten job's rows: exit $rc"; }
[[ $(kstored) == "$stored" ]] || fail "the refused rebuild moved the group's offsets"
kt_dry_run_alike "$rc" "$WORK/krb" "$KTALLY" reset --brokers "$KT_BROKERS" --db "$kdb_uri" --job "$kjob" \
  --to earliest --rebuild --execute
note "$TEST_NAME: plans from ktally_coverage; forward then back exact; $rewinds rewinds ($live under a live run) and $kills kill -9s exact; --offsets kafka moved and exact"
