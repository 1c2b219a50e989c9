#!/usr/bin/env bash
# broker: any - nothing here is Kafka-specific; the mock is quicker.
#
# Log text is UTF-8 in the wild: a --pattern, a job name and a table name
# may be. Red before: any byte beyond ASCII in an option was refused with
# "Invalid byte sequence in conversion input", naming no option (GOption
# converted values from the C locale's ASCII), on the command line and
# from a config file alike; job and table names were ASCII only. Now:
#  - under a UTF-8 locale and under the C locale (whose text is taken as
#    UTF-8), `--pattern '... café=...'`, `--job relevé-é` and
#    `--table données` count exactly, in both modes, the same from a
#    config file; status, jobs and audit name them;
#  - a value that is not valid UTF-8 nor valid in the locale's charset
#    is refused with one line naming the option, exit 2, nothing created;
#  - one rule for every table a job names (--table, --dead-letters,
#    idempotent mode's NAME_topic): past the 250 bytes of MariaDB's file
#    names (5 for a character beyond ASCII) it is refused in one line,
#    exit 2, nothing created (red before: exit 3 at CREATE TABLE, "File
#    name too long", after ktally's own tables were made); 50 CJK
#    characters and --dead-letters dé count.
source "$(dirname "$0")/lib.sh"

# Lines of the default shape with a UTF-8 tail, and their truth per minute.
: > "$WORK/lines"
for m in 10 11 12; do
  for s in 01 02 03 04 05 06 07; do
    echo "2024-05-01 09:$m:$s ERROR café=$s über" >> "$WORK/lines"
    echo "2024-05-01 09:$m:$s INFO café=$s" >> "$WORK/lines"
  done
done
printf '2024-05-01 09:10:00\t7\n2024-05-01 09:11:00\t7\n2024-05-01 09:12:00\t7\n' > "$WORK/truth"
topic=$(kt_new_topic utf8 1)
kcat -P -b "$KT_BROKERS" -t "$topic" -p 0 -l "$WORK/lines" || fail "kcat could not produce"
pattern='^(?<time>\S+ \S+) (?<level>[A-Z]+) café=(?<n>\d+)'

for mode in transactional idempotent; do
  db_uri=$(kt_new_db "utf8_$mode"); db=$(kt_db_name "$db_uri")
  for locale in C.UTF-8 C; do
    job="relevé-$mode-$locale"
    LC_ALL=$locale "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" \
      --mode "$mode" --job "$job" --table "données_${locale//[^A-Za-z]/_}" --pattern "$pattern" \
      --interval 0 --exit-when-idle 2> "$WORK/run.log" \
      || { tail -3 "$WORK/run.log" >&2; fail "$mode, LC_ALL=$locale: the run failed"; }
    kt_check_counts "$db" "$WORK/truth" "données_${locale//[^A-Za-z]/_}"
    LC_ALL=$locale "$KTALLY" status --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" \
      --job "$job" > "$WORK/status" 2>&1 || { cat "$WORK/status" >&2; fail "status of $job failed"; }
    grep -q "$job" "$WORK/status" || fail "status does not name $job"
  done
  # The same from a config file, its pattern and names in UTF-8.
  cat > "$WORK/k.conf" <<EOF
[kafka]
brokers = $KT_BROKERS
topic = $topic
[mysql]
uri = $db_uri
[batch]
job = fichier-é
mode = $mode
table = données_fichier
interval = 0
exit-when-idle = true
[parse]
pattern = $pattern
EOF
  LC_ALL=C "$KTALLY" run --config "$WORK/k.conf" 2> "$WORK/run.log" \
    || { tail -3 "$WORK/run.log" >&2; fail "$mode: the config file's run failed"; }
  kt_check_counts "$db" "$WORK/truth" données_fichier
  "$KTALLY" jobs --db "$db_uri" > "$WORK/jobs" 2>&1 || { cat "$WORK/jobs" >&2; fail "jobs failed"; }
  grep -q "fichier-é" "$WORK/jobs" || { cat "$WORK/jobs" >&2; fail "jobs does not list fichier-é"; }
  kt_audit "$db_uri"
done

# Bytes that are no text: refused, naming the option, nothing created.
db_uri=$(kt_new_db utf8_bad); db=$(kt_db_name "$db_uri")
for locale in C.UTF-8 C; do
  for flag in --job --table --pattern; do
    rc=0
    LC_ALL=$locale "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" \
      "$flag" "bad$(printf '\xff')name" --exit-when-idle 2> "$WORK/err" || rc=$?
    [[ $rc == 2 && $(grep -c . "$WORK/err") == 1 ]] && grep -q -- "$flag: the value is" "$WORK/err" \
      || { cat "$WORK/err" >&2; fail "LC_ALL=$locale $flag with a byte 0xff: exit $rc"; }
  done
done
# One rule for every table a job names: --table, --dead-letters, and
# idempotent mode's NAME_topic, each character beyond ASCII counting 5 of
# the 250 bytes of MariaDB's file names. Red before: 51 CJK characters
# were taken, ktally's tables created, then the job's failed with exit 3
# ("File name too long"); a name of another shape had a message per option.
cjk() { python3 -c "print('\u4e2d' * $1)"; }
refused_name() {  # refused_name WHAT ARGS...: exit 2, one line, the rule named
  local what=$1 rc=0; shift
  "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --exit-when-idle "$@" \
    2> "$WORK/err" || rc=$?
  [[ $rc == 2 && $(grep -c . "$WORK/err") == 1 ]] && grep -q "each counting as 5 of the 250 bytes" "$WORK/err" \
    || { cat "$WORK/err" >&2; fail "$what: exit $rc"; }
}
refused_name "--table of 51 CJK characters" --table "$(cjk 51)"
refused_name "--dead-letters of 51 CJK characters" --dead-letters "$(cjk 51)"
refused_name "--dead-letters d-l" --dead-letters d-l
refused_name "--mode idempotent --table of 49 CJK characters (NAME_topic 251 bytes)" \
  --mode idempotent --table "$(cjk 49)"
[[ -z $(kt_sql "$db" "SHOW TABLES") ]] || fail "a refused run created tables"
# At the bound: 50 of them, and the dead letters in a UTF-8 table.
printf '2024-05-01 09:13:00 ERROR\x01broken\n' | kcat -P -b "$KT_BROKERS" -t "$topic" -p 0 \
  || fail "kcat could not produce"
"$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --table "$(cjk 50)" \
  --dead-letters dé --pattern "$pattern" --interval 0 --exit-when-idle 2> "$WORK/run.log" \
  || { tail -3 "$WORK/run.log" >&2; fail "--table of 50 CJK characters, --dead-letters dé: the run failed"; }
kt_check_counts "$db" "$WORK/truth" "$(cjk 50)"
[[ $(kt_sql "$db" "SELECT COUNT(*) FROM dé") -ge 1 ]] || fail "--dead-letters dé kept no line"
note "$TEST_NAME: UTF-8 patterns, jobs and tables counted exactly in both modes, under C.UTF-8 and C; bytes that are no text refused by name; table names past MariaDB's file-name bytes refused by one rule"
