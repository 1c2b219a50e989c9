#!/usr/bin/env bash
# The structured inputs, counted exactly through kill -9 in both modes:
# a Fluent Bit-style JSON stream (--input json, kt-gen --shape ecs: ECS
# records nested and dotted, pino's, times in RFC 3339 and epoch numbers),
# a logfmt stream and an OTLP JSON stream (the Collector's otlp_json, a
# request of three log records a value), each with --by and --sum
# (service.name or svc, level; bytes) and hostile records among them
# (cut short, NUL and lone surrogate escapes, invalid UTF-8, 71 deep,
# no time, levels of the wrong type, go-logfmt's refusals, whole OTLP
# requests bad), killed -9 at random while records arrive. At the end
# every (minute, service, level) row holds its exact count and sum, each
# malformed record is in the dead-letter table once with its reason, the
# offsets reach the high watermarks and the audit finds one chain. Then
# records kt-gen does not write: a 4 MB object (counted) and one cut at
# its end (malformed), a raw NUL in a string (OTLP's protobuf encoding is
# test-parse-otlp's: its bytes hold newlines, lines to --input json). Red if a record counts twice or not at all across a kill, a
# hostile record counts or fails a batch, or a dead letter is lost.
# And samples/structured/ count their expected tables. ~30 s
# (KT_KILLS=5 a run, 30 runs killed).
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

KILLS=${KT_KILLS:-5}
reasons='^(json|utf8|nul|surrogate|depth|missing|type|time|range|field|shape)$'

for shape in ecs logfmt otlp; do
  kt_shape_options "$shape"
  for mode in transactional idempotent; do
    db_uri=$(kt_new_db "in_${shape}_$mode"); db=$(kt_db_name "$db_uri")
    topic=$(kt_new_topic "in_${shape}_$mode" 4)
    kt_gen "$topic" --shape "$shape" --keys 30 --lines 9000 --rate 4000 --lines-per-value 3 \
      --per-second 60 --malformed 30 --seed "$((KT_SEED + ${#shape}))" \
      --truth "$WORK/truth" > "$WORK/gen" &
    gen=$!; KT_CHILDREN+=("$gen")
    run_args=(run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --mode "$mode"
              --interval 0 --max-per-partition 100 --dead-letters dead --log-format json
              "${KT_OPTS[@]}")
    kills=0
    while ((kills < KILLS)); do
      kt_kill9 20 300 "$WORK/$shape-$mode.log" "$KTALLY" "${run_args[@]}" && kills=$((kills + 1))
    done
    wait "$gen" || fail "kt-gen failed"
    "$KTALLY" "${run_args[@]}" --exit-when-idle 2>> "$WORK/$shape-$mode.log" \
      || { tail -20 "$WORK/$shape-$mode.log" >&2; fail "$shape $mode: final run failed"; }
    kt_check_groups "$db" "$WORK/truth"
    kt_audit "$db_uri"
    messages=$(sed 's/.*messages=\([0-9]*\).*/\1/' "$WORK/gen")
    malformed=$(sed 's/.*malformed=\([0-9]*\).*/\1/' "$WORK/gen")
    [[ $(kt_offset_sum "$db" "$topic") == "$messages" ]] \
      || fail "$shape $mode: stored offsets do not add up to $messages"
    # Each malformed record once, whatever read it again after a kill.
    [[ $(kt_sql "$db" "SELECT COUNT(*) FROM dead") == "$malformed" ]] \
      || fail "$shape $mode: $(kt_sql "$db" "SELECT COUNT(*) FROM dead") dead letters, kt-gen wrote $malformed malformed records"
    kt_sql "$db" "SELECT DISTINCT reason FROM dead" | grep -Evq "$reasons" \
      && fail "$shape $mode: a reason outside the documented ones: $(kt_sql "$db" "SELECT DISTINCT reason FROM dead" | tr '\n' ' ')"
    note "$TEST_NAME: $shape $mode: $kills kills, 9000 records, $(wc -l < "$WORK/truth") rows exact, $malformed malformed kept once ($(kt_sql "$db" "SELECT GROUP_CONCAT(DISTINCT reason ORDER BY reason) FROM dead"))"
  done
done

# What kt-gen does not write: 4 MB objects, a raw NUL.
if [[ $KT_KAFKA == apache ]]; then
  topic=$(kt_new_topic in_hostile 4 --config max.message.bytes=20000000)
else
  topic=$(kt_new_topic in_hostile 4)
fi
produce() { kcat -b "$KT_BROKERS" -P -t "$topic" -p "$1" -X message.max.bytes=20000000 "$2" \
              || fail "kcat -P $2"; }
{ printf '{"@timestamp":"2024-05-01T12:34:56Z","log.level":"error","message":"'
  head -c 4194304 /dev/zero | tr '\0' 'x'; printf '"}'; } > "$WORK/big-good"
{ printf '{"@timestamp":"2024-05-01T12:35:56Z","log.level":"error","message":"'
  head -c 4194304 /dev/zero | tr '\0' 'y'; printf '"]'; } > "$WORK/big-bad"
printf '{"ts":1714566896,"level":"error","msg":"a\0b"}\n{"ts":1714566896,"level":"ERROR"}' > "$WORK/nul"
produce 0 "$WORK/big-good"; produce 1 "$WORK/big-bad"; produce 2 "$WORK/nul"
printf '2024-05-01 12:34:00\t2\n' > "$WORK/hostile.truth"
for mode in transactional idempotent; do
  db_uri=$(kt_new_db "in_hostile_$mode"); db=$(kt_db_name "$db_uri")
  "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --mode "$mode" --input json \
    --interval 0 --exit-when-idle --dead-letters dead --log-format json 2> "$WORK/hostile-$mode.log" \
    || { tail -5 "$WORK/hostile-$mode.log" >&2; fail "hostile $mode: run failed"; }
  kt_check_counts "$db" "$WORK/hostile.truth"
  [[ $(kt_sql "$db" "SELECT GROUP_CONCAT(CONCAT(\`partition\`, ':', line_no, ':', reason, ':', raw_bytes) ORDER BY \`partition\`) FROM dead") \
       == "1:1:json:$(stat -c %s "$WORK/big-bad"),2:1:nul:45" ]] \
    || fail "hostile $mode: dead letters $(kt_sql "$db" "SELECT GROUP_CONCAT(CONCAT(\`partition\`, ':', line_no, ':', reason, ':', raw_bytes)) FROM dead")"
  kt_audit "$db_uri"
done
note "$TEST_NAME: a 4 MB object counted, one cut short and a raw NUL malformed, both modes"

# samples/structured/: each stream with its config counts its expected
# table (what `scripts/demo --input json` shows), so the samples cannot rot.
for name in fluent-bit otlp; do
  db_uri=$(kt_new_db "in_sample_${name//-/_}"); db=$(kt_db_name "$db_uri")
  topic=$(kt_new_topic "in_sample_${name//-/_}" 2)
  kcat -b "$KT_BROKERS" -P -t "$topic" -l -X sticky.partitioning.linger.ms=0 \
    "$KT_SRC/samples/structured/$name.json" || fail "kcat -P $name.json"
  "$KTALLY" run --config "$KT_SRC/samples/structured/$name.conf" --brokers "$KT_BROKERS" \
    --topic "$topic" --db "$db_uri" --table by_service --interval 0 --exit-when-idle \
    2> "$WORK/sample-$name.log" || { tail -5 "$WORK/sample-$name.log" >&2; fail "sample $name: run failed"; }
  sum=$(sed -n 's/^sum = //p' "$KT_SRC/samples/structured/$name.conf" | tr -c 'A-Za-z0-9_\n' '_')
  kt_sql "$db" "SELECT log_time, service_name, level, log_count, sum_$sum FROM by_service
                ORDER BY log_time, service_name, level" > "$WORK/sample-$name.tsv"
  diff "$WORK/sample-$name.tsv" "$KT_SRC/samples/structured/$name.expected" >&2 \
    || fail "sample $name: by_service differs from samples/structured/$name.expected"
done
note "$TEST_NAME: samples/structured/ count their expected tables"
