#!/usr/bin/env bash
# SIGTERM and SIGINT: exit 0 within the interval, nothing partial (the
# counts equal the truth of exactly the committed offsets).
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

db_uri=$(kt_new_db sig); db=$(kt_db_name "$db_uri")
topic=$(kt_new_topic sig 4)
kt_gen "$topic" --lines 100000 --seed 5 --truth "$WORK/truth" > "$WORK/gen"

for sig in TERM INT TERM INT; do
  "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" \
    --interval 2 --max-per-partition 3000 2>> "$WORK/run.log" &
  pid=$!
  sleep "0.$((100 + $(kt_rand 800)))"
  t0=$SECONDS
  kill -"$sig" "$pid"
  rc=0; wait "$pid" || rc=$?
  [[ $rc == 0 ]] || fail "SIG$sig: exit $rc, expected 0"
  ((SECONDS - t0 <= 3)) || fail "SIG$sig: took $((SECONDS - t0)) s to stop (interval 2 s)"
done
"$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" \
  --interval 0 --exit-when-idle 2>> "$WORK/run.log" || fail "final run failed"
kt_check_counts "$db" "$WORK/truth"
kt_audit "$db_uri"
note "$TEST_NAME: 4 signals, each exit 0 within the interval; exact"
