#!/usr/bin/env bash
# An idempotent job with `run --table NAME` writes NAME_topic (and a view
# NAME over it), not error_log_topic: `reset --to earliest --rebuild`
# must empty the job's rows there, or the job counts everything twice.
# Likewise `forget` names the table whose rows stay. A transactional job
# of its own table is rebuilt whole, as 163 does for error_log. A view
# where the table it empties must be is refused, the dry run alike.
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"

for mode in idempotent transactional; do
  db_uri=$(kt_new_db "own_$mode"); db=$(kt_db_name "$db_uri")
  topic=$(kt_new_topic "own_$mode" 2)
  table=own_$mode
  idle() {
    timeout 60 "$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --mode "$mode" \
      --table "$table" --interval 0 --exit-when-idle 2>> "$WORK/run_$mode.log" \
      || { tail -5 "$WORK/run_$mode.log" >&2; fail "$mode: run failed"; }
  }
  kt_gen "$topic" --lines 1000 --seed 1650 --truth "$WORK/truth" > /dev/null || fail "kt-gen failed"
  idle
  kt_check_counts "$db" "$WORK/truth" "$table"

  "$KTALLY" reset --brokers "$KT_BROKERS" --db "$db_uri" --job "$topic" --to earliest --rebuild \
    --execute > "$WORK/rb_$mode" 2>&1 || { cat "$WORK/rb_$mode" >&2; fail "$mode: the rebuild failed"; }
  if [[ $mode == idempotent ]]; then
    grep -q "^deleted the rows of job $topic in ${table}_topic and ktally_coverage" "$WORK/rb_$mode" \
      || { cat "$WORK/rb_$mode" >&2; fail "$mode: the rebuild does not name ${table}_topic"; }
  else
    grep -q "^deleted every row of $table " "$WORK/rb_$mode" \
      || { cat "$WORK/rb_$mode" >&2; fail "$mode: the rebuild does not name $table"; }
  fi
  idle
  kt_check_counts "$db" "$WORK/truth" "$table"
  kt_audit "$db_uri"

  "$KTALLY" forget --db "$db_uri" --job "$topic" > "$WORK/fg_$mode" 2>&1 \
    || { cat "$WORK/fg_$mode" >&2; fail "$mode: the dry run of forget failed"; }
  if [[ $mode == idempotent ]]; then
    grep -q "^  ${table}_topic: its [0-9]* rows (job $topic)" "$WORK/fg_$mode" \
      || { cat "$WORK/fg_$mode" >&2; fail "$mode: forget does not name ${table}_topic"; }
  fi
  # What a rebuild empties must be the job's table: through a view, its
  # DELETE emptied what the view reads (exit 0). Refused now, the dry run
  # alike, nothing deleted.
  rows=$table; [[ $mode == idempotent ]] && rows=${table}_topic
  kt_sql "$db" "RENAME TABLE $rows TO hidden_$mode; CREATE VIEW $rows AS SELECT * FROM hidden_$mode"
  before=$(kt_sql "$db" "CHECKSUM TABLE hidden_$mode")
  rc=0; "$KTALLY" reset --brokers "$KT_BROKERS" --db "$db_uri" --job "$topic" --to earliest --rebuild \
    --execute > /dev/null 2> "$WORK/view_$mode" || rc=$?
  ((rc == 2)) && grep -q "$rows is a view over hidden_$mode, not a table" "$WORK/view_$mode" \
    || { cat "$WORK/view_$mode" >&2; fail "$mode: a rebuild through a view: exit $rc"; }
  [[ $(kt_sql "$db" "CHECKSUM TABLE hidden_$mode") == "$before" ]] || fail "$mode: a refused rebuild deleted rows"
  kt_dry_run_alike "$rc" "$WORK/view_$mode" "$KTALLY" reset --brokers "$KT_BROKERS" --db "$db_uri" \
    --job "$topic" --to earliest --rebuild --execute
  note "$TEST_NAME: $mode: --table $table rebuilt exact; through a view refused"
done
