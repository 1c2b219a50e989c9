#!/usr/bin/env bash
# Hostile values (tests/corpus/ plus generated ones: empty, null, 1 MB,
# 4 MB, 10,000 lines in one value) are counted exactly, the malformed count
# is reported, and nothing crashes, in both modes. (16 MB values are parsed
# in tests/test-parse.c: the mock broker keeps only ~5 MB per partition, so
# a 16 MB record is dropped by its retention as soon as it is written.
# Apache Kafka takes records above 1 MB only into a topic whose
# max.message.bytes says so.)
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

corpus=$KT_SRC/tests/corpus
if [[ $KT_KAFKA == apache ]]; then
  topic=$(kt_new_topic hostile 3 --config max.message.bytes=20000000)
else
  topic=$(kt_new_topic hostile 3)
fi
big=(-X message.max.bytes=20000000)
produce() { kcat -b "$KT_BROKERS" -P -t "$topic" -p "$1" "${big[@]}" "${@:2}" || fail "kcat -P $*"; }

for f in "$corpus"/*.txt; do produce 0 "$f"; done
# kcat skips empty files: kt-gen sends the empty and the null value.
kt_gen "$topic" --lines 0 --empties 1 --nulls 1 --partition 1 > /dev/null
{ printf '2017-07-30 14:02:00 ERROR '; head -c 1048576 /dev/zero | tr '\0' 'x'; } > "$WORK/1mb"
produce 1 "$WORK/1mb"
{ printf '2017-07-30 14:03:00 ERROR '; head -c 4194304 /dev/zero | tr '\0' 'y'; } > "$WORK/4mb"
produce 2 "$WORK/4mb"   # alone: with the 1 MB one it would pass the retention
awk 'BEGIN { for (i = 0; i < 10000; i++) printf "2017-07-30 14:04:%02d %s line %d\n", i % 60, i % 2 ? "INFO" : "ERROR", i }' > "$WORK/10k"
produce 0 "$WORK/10k"
records=$(( $(ls "$corpus"/*.txt | wc -l) + 5 ))

for mode in transactional idempotent; do
  db_uri=$(kt_new_db "hostile_$mode"); db=$(kt_db_name "$db_uri")
  "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --mode "$mode" \
    --interval 0 --exit-when-idle --log-format json 2> "$WORK/$mode.log" \
    || { cat "$WORK/$mode.log" >&2; fail "$mode run failed"; }
  kt_check_counts "$db" "$corpus/expected.tsv"
  [[ $(kt_offset_sum "$db" "$topic") == "$records" ]] || fail "$mode: offsets do not add up to $records"
  malformed=$(kt_log_sum batch malformed "$WORK/$mode.log")
  [[ $malformed == 17 ]] || fail "$mode: reported $malformed malformed lines, expected 17"
  kt_log_has sample "$WORK/$mode.log" || fail "$mode: no malformed sample logged"
done
note "$TEST_NAME: $records hostile records (up to 4 MB, 10,000 lines, NUL, invalid UTF-8, null) exact in both modes, 17 malformed reported"
