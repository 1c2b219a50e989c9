#!/usr/bin/env bash
# Job and topic names compare byte for byte (issue #11 item 4). Kafka topic
# names are case-sensitive, but kafka_offset, ktally_batches and idempotent
# mode's tables compared them case-insensitively: topic `CaseT` at offset
# 300, then topic `caset` read CaseT's offset row and started at 300 (exit
# 4 when shorter, 300 records silently skipped when longer); in idempotent
# mode the two also shared counts and covered sets. Now each has its own
# rows, and both are exact, in both modes.
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

upper=$(kt_new_topic CaseT 1)
lower=$(kt_new_topic caset 1)
[[ ${upper,,} == "$lower" ]] || fail "the two topic names should differ only in case"
kt_gen "$upper" --lines 300 --seed 141 --truth "$WORK/t_upper" > /dev/null
kt_gen "$lower" --lines 500 --seed 142 --truth "$WORK/t_lower" > /dev/null
kt_sum_truths "$WORK/t_upper" "$WORK/t_lower" > "$WORK/truth"

for mode in transactional idempotent; do
  db_uri=$(kt_new_db "names_$mode"); db=$(kt_db_name "$db_uri")
  for topic in "$upper" "$lower"; do
    "$KTALLY" run --mode "$mode" --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" \
      --interval 0 --exit-when-idle 2> "$WORK/$mode-$topic.log" \
      || { tail -5 "$WORK/$mode-$topic.log" >&2; fail "$mode: run of topic $topic failed"; }
  done
  # Each job (named after its topic) has its own offset row, at its own end.
  kt_sql "$db" "SELECT job, topic, \`offset\` FROM kafka_offset ORDER BY BINARY job" > "$WORK/offsets"
  printf '%s\t%s\t300\n%s\t%s\t500\n' "$upper" "$upper" "$lower" "$lower" > "$WORK/want_offsets"
  diff "$WORK/offsets" "$WORK/want_offsets" >&2 || fail "$mode: kafka_offset mixes the two topics"
  # Every audit row and chunk row stays with its own topic.
  [[ $(kt_sql "$db" "SELECT COALESCE(SUM(until_offset - from_offset), 0) FROM ktally_batches
                     WHERE topic = '$lower'") == 500 ]] || fail "$mode: $lower's audit rows do not cover 500 offsets"
  if [[ $mode == idempotent ]]; then
    [[ $(kt_sql "$db" "SELECT COUNT(DISTINCT topic) FROM ktally_coverage") == 2 ]] \
      || fail "idempotent: the two topics share covered sets"
  fi
  kt_check_counts "$db" "$WORK/truth"
  kt_audit "$db_uri"
done

note "$TEST_NAME: topics $upper (300) and $lower (500) kept apart, both exact, in both modes"
