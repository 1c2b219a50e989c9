#!/usr/bin/env bash
# A database whose schema is newer than this ktally (a newer ktally
# migrated it) is refused by every command with one line and exit 2, and
# nothing in it is touched: not written, not created, not migrated back.
# broker: any — uses Kafka as any client does (topics made with kt_new_topic)
source "$(dirname "$0")/lib.sh"
source "$KT_SRC/tests/integration/schema-v1/lib.sh"

topic=$(kt_new_topic newer 2)
kt_gen "$topic" --lines 1000 --seed 145 > /dev/null
db_uri=$(kt_new_db newer); db=$(kt_db_name "$db_uri")
"$KTALLY" run --brokers "$KT_BROKERS" --topic "$topic" --db "$db_uri" --interval 0 \
  --exit-when-idle 2> "$WORK/first.log" || { tail -3 "$WORK/first.log" >&2; fail "first run failed"; }
[[ $(kt_schema_version "$db") == "$KT_SCHEMA_LATEST" ]] || fail "a fresh database should be at version $KT_SCHEMA_LATEST"
kt_gen "$topic" --lines 1000 --seed 146 > /dev/null
newer=$((KT_SCHEMA_LATEST + 1))
kt_sql "$db" "INSERT INTO ktally_schema (version, ktally) VALUES ($newer, '9.9.9')"
snapshot() { kt_shape "$db"; kt_sql "$db" "CHECKSUM TABLE error_log, kafka_offset, ktally_batches, ktally_schema"; }
snapshot > "$WORK/before"

want="${db}: schema version $newer is newer than this ktally ($KT_SCHEMA_LATEST): upgrade ktally"
commands=(
  "run --brokers $KT_BROKERS --topic $topic --db $db_uri --interval 0 --exit-when-idle"
  "run --mode idempotent --brokers $KT_BROKERS --topic $topic --db $db_uri --interval 0 --exit-when-idle"
  "run --kind ledger --brokers $KT_BROKERS --topic $topic --db $db_uri --interval 0 --exit-when-idle"
  "replay --brokers $KT_BROKERS --topic $topic --db $db_uri --from 0:0 --until 0:10 --table newer_replay"
  "init-db --db $db_uri"
  "init-db --mode idempotent --db $db_uri"
  "status --brokers $KT_BROKERS --topic $topic --db $db_uri"
  "audit --db $db_uri"
)
for c in "${commands[@]}"; do
  rc=0
  # shellcheck disable=SC2086
  "$KTALLY" $c > "$WORK/out" 2> "$WORK/err" || rc=$?
  name=${c%% --brokers*}; name=${name%% --db*}
  ((rc == 2)) || { cat "$WORK/err" >&2; fail "$name: exit $rc on a newer schema, not 2"; }
  [[ $(grep -c . "$WORK/err") == 1 ]] || { cat "$WORK/err" >&2; fail "$name: more than one line on stderr"; }
  # main.c adds its usual "(try 'ktally COMMAND --help')" to every exit 2.
  grep -q "^ktally: .*/${db}: schema version $newer is newer than this ktally ($KT_SCHEMA_LATEST): upgrade ktally\( (try .*)\)\?$" "$WORK/err" \
    || { cat "$WORK/err" >&2; fail "$name: not the line '$want'"; }
  [[ ! -s "$WORK/out" ]] || fail "$name: printed output for a database it refused"
done
snapshot | diff - "$WORK/before" >&2 || fail "a refused command touched the database"

note "$TEST_NAME: ${#commands[@]} commands refused a schema of version $newer with exit 2, nothing touched"
