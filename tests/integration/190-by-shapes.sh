#!/usr/bin/env bash
# --by and --sum over three log formats with a known truth per (bucket,
# key): nginx-style access logs (--by service,status --sum bytes, the
# 4xx and 5xx requests), syslog with hosts (--by host,level, syslog's
# year rule), iso8601 JSON-ish lines with offsets (--by level,service
# --sum latency_ms, 5-minute buckets in UTC). Each in both modes, exact
# (UTF-8 and empty keys, bad sums malformed and reported), then replayed
# into a table of the same shape, exact again; the audit passes.
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

for shape in access syslog json; do
  topic=$(kt_new_topic "by_$shape" 4)
  kt_shape_options "$shape"
  kt_gen "$topic" --shape "$shape" --lines 12000 --lines-per-value 3 --per-second 40 \
    --seed "$((KT_SEED + ${#shape}))" --truth "$WORK/$shape.truth" > "$WORK/$shape.gen" \
    || fail "kt-gen --shape $shape failed"
  want_malformed=$(sed 's/.*malformed=\([0-9]*\).*/\1/' "$WORK/$shape.gen")
  messages=$(sed 's/.*messages=\([0-9]*\).*/\1/' "$WORK/$shape.gen")
  for mode in transactional idempotent; do
    db_uri=$(kt_new_db "by_${shape}_$mode"); db=$(kt_db_name "$db_uri")
    "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --mode "$mode" \
      --interval 0 --max-per-partition 500 --exit-when-idle --log-format json "${KT_OPTS[@]}" 2> "$WORK/run.log" \
      || { tail -5 "$WORK/run.log" >&2; fail "$shape $mode: run failed"; }
    kt_check_groups "$db" "$WORK/$shape.truth"
    [[ $(kt_log_sum batch malformed "$WORK/run.log") == "$want_malformed" ]] \
      || fail "$shape $mode: $(kt_log_sum batch malformed "$WORK/run.log") malformed lines reported, kt-gen wrote $want_malformed"
    [[ $(kt_offset_sum "$db" "$topic") == "$messages" ]] || fail "$shape $mode: offsets do not add up to $messages"
    kt_audit "$db_uri"
  done
  # The whole topic replayed into a table of the same shape (the last
  # database: an idempotent one, whose error_log is a view).
  marks=$(kt_watermarks "$topic" | tr ' ' '\n')
  from=$(awk -F: 'NF == 3 { printf "%s%s:%s", s, $1, $2; s = "," }' <<< "$marks")
  until=$(awk -F: 'NF == 3 { printf "%s%s:%s", s, $1, $3; s = "," }' <<< "$marks")
  "$KTALLY" replay --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --table "rp_$shape" \
    --from "$from" --until "$until" "${KT_OPTS[@]}" 2> "$WORK/replay.log" \
    || { tail -5 "$WORK/replay.log" >&2; fail "$shape: replay failed"; }
  kt_check_groups "$db" "$WORK/$shape.truth" "rp_$shape"
  kt_audit "$db_uri"
  note "$TEST_NAME: $shape: $(wc -l < "$WORK/$shape.truth") (bucket, key) rows exact in both modes and a replay, $want_malformed malformed"
done
