#!/usr/bin/env bash
# The oddest legal values of --by and --sum fields, in both modes, with
# --bucket 1h: an empty match, NUL bytes, invalid UTF-8, keys that differ
# only in case or a trailing space, a value longer than its column (cut at
# 255 bytes, never inside a UTF-8 character), a 4 MB value; sums past the
# 64-bit bound or with five decimals, and a line whose every key is
# '(other)', which are malformed, counted and sampled (and kept with
# --dead-letters, reason "field"), never a failed batch. Then --max-keys 1: one key a bucket, the rest in its (other) row,
# reported in the batch line and warned of. (A 10 MB line is in
# test-parse: the mock broker keeps ~5 MB a partition. Apache Kafka takes
# records above 1 MB only into a topic whose max.message.bytes says so.)
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

if [[ $KT_KAFKA == apache ]]; then
  topic=$(kt_new_topic by_hostile 2 --config max.message.bytes=20000000)
else
  topic=$(kt_new_topic by_hostile 2)
fi
big=(-X message.max.bytes=20000000)
x254=$(head -c 254 /dev/zero | tr '\0' x)
{
  printf '2017-07-30 14:09:08 ERROR k=; n=1;\n'
  printf '2017-07-30 14:10:00 ERROR k=a\0b; n=2;\n'
  printf '2017-07-30 14:11:00 ERROR k=\xff\xfe; n=3;\n'
  printf '2017-07-30 14:12:00 ERROR k=a; n=4;\n'
  printf '2017-07-30 14:12:01 ERROR k=a ; n=5;\n'
  printf '2017-07-30 14:12:02 ERROR k=A; n=6;\n'
  printf '2017-07-30 14:13:00 ERROR k=%s\xc3\xa9tail; n=7;\n' "$x254"
  printf '2017-07-30 14:14:00 ERROR k=a; n=922337203685477.5808;\n'
  printf '2017-07-30 14:14:01 ERROR k=a; n=99999999999999999999;\n'
  printf '2017-07-30 14:14:02 ERROR k=a; n=1.00001;\n'
  printf '2017-07-30 14:14:03 ERROR k=(other); n=1;\n'
  printf '2017-07-30 14:14:04 INFO k=a; n=not a number;\n'
} > "$WORK/odd"
kcat -b "$KT_BROKERS" -P -t "$topic" -p 0 "$WORK/odd" || fail "kcat failed"
{ printf '2017-07-30 15:00:00 ERROR k='; head -c 4194304 /dev/zero | tr '\0' y; printf '; n=1;'; } > "$WORK/4mb"
kcat -b "$KT_BROKERS" -P -t "$topic" -p 1 "${big[@]}" "$WORK/4mb" || fail "kcat 4mb failed"

y255=$(head -c 255 /dev/zero | tr '\0' Y | sed 's/Y/79/g')
{
  printf '2017-07-30 14:00:00\t\t1\t1.0000\n'
  printf '2017-07-30 14:00:00\t610062\t1\t2.0000\n'
  printf '2017-07-30 14:00:00\tFFFE\t1\t3.0000\n'
  printf '2017-07-30 14:00:00\t61\t1\t4.0000\n'
  printf '2017-07-30 14:00:00\t6120\t1\t5.0000\n'
  printf '2017-07-30 14:00:00\t41\t1\t6.0000\n'
  printf '2017-07-30 14:00:00\t%s\t1\t7.0000\n' "${x254//x/78}"
  printf '2017-07-30 15:00:00\t%s\t1\t1.0000\n' "$y255"
} | LC_ALL=C sort > "$WORK/want"
opts=(--pattern '^(?<time>\S+ \S+) (?<level>[A-Z]+) k=(?<k>[^;]*); n=(?<n>[^;]*);' --by k --sum n
      --bucket 1h)
for mode in transactional idempotent; do
  db_uri=$(kt_new_db "by_hostile_$mode"); db=$(kt_db_name "$db_uri")
  "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --mode "$mode" --interval 0 \
    --exit-when-idle --log-format json "${opts[@]}" --dead-letters odd 2> "$WORK/$mode.log" \
    || { tail -5 "$WORK/$mode.log" >&2; fail "$mode: run failed"; }
  kt_sql "$db" "SELECT log_time, HEX(k), log_count, sum_n FROM error_log" | LC_ALL=C sort > "$WORK/got"
  cmp -s "$WORK/got" "$WORK/want" || { diff "$WORK/got" "$WORK/want" | cut -c1-150 >&2; fail "$mode: odd keys not exact"; }
  [[ $(kt_log_sum batch malformed "$WORK/$mode.log") == 4 ]] || fail "$mode: $(kt_log_sum batch malformed "$WORK/$mode.log") malformed reported, expected 4"
  [[ $(kt_log_count sample "$WORK/$mode.log") -ge 1 ]] || fail "$mode: no malformed sample"
  # --dead-letters: lines 8 to 11 of the record, each a bad --sum or all (other).
  kept=$(kt_sql "$db" "SELECT line_no, reason, raw FROM odd ORDER BY line_no")
  [[ $kept == "$(sed -n '8,11p' "$WORK/odd" | awk '{ printf "%d\tfield\t%s\n", NR + 7, $0 }' | sed '$s/\n$//')" ]] \
    || { echo "$kept" >&2; fail "$mode: the dead-letter table does not hold lines 8 to 11"; }
  kt_audit "$db_uri"

  # --max-keys 1: the first key of each bucket in the batch, then (other).
  "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --mode "$mode" --interval 0 \
    --exit-when-idle --log-format json --job "one$RUN_ID" --table one_key "${opts[@]}" --max-keys 1 2> "$WORK/one.log" \
    || { tail -5 "$WORK/one.log" >&2; fail "$mode: --max-keys 1 failed"; }
  printf '2017-07-30 14:00:00\t\t1\t1.0000\n2017-07-30 14:00:00\t(other)\t6\t27.0000\n2017-07-30 15:00:00\t%s\t1\t1.0000\n' "$(head -c 255 /dev/zero | tr '\0' y)" \
    | LC_ALL=C sort > "$WORK/want1"
  kt_sql "$db" "SELECT log_time, k, log_count, sum_n FROM one_key" | LC_ALL=C sort > "$WORK/got1"
  cmp -s "$WORK/got1" "$WORK/want1" || { diff "$WORK/got1" "$WORK/want1" | cut -c1-150 >&2; fail "$mode: --max-keys 1 not as expected"; }
  [[ $(kt_log_sum batch folded "$WORK/one.log") == 6 ]] || fail "$mode: the batch records do not count the 6 folded lines"
  [[ $(kt_log_sum folded lines "$WORK/one.log") == 6 ]] || fail "$mode: no warning about the 6 folded lines"
  kt_audit "$db_uri"
done
note "$TEST_NAME: empty, NUL, invalid UTF-8, case, trailing space, 255-byte cut, 4 MB keys exact in both modes; 4 malformed; --max-keys 1 folded 6 lines"
