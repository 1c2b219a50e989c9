#!/usr/bin/env bash
# Usage and dependency errors: exactly one clear line on stderr, the
# documented exit code, and no table created.
source "$(dirname "$0")/lib.sh"

db_uri=$(kt_new_db badcfg); db=$(kt_db_name "$db_uri")
topic=$(kt_new_topic badcfg 2)
base_uri=${KT_DB_URI_BASE%%:*}  # mysql

expect() {  # expect CODE PATTERN ARGS...: exit code and the one stderr line
  local code=$1 pattern=$2 rc=0; shift 2
  timeout 60 "$KTALLY" "$@" > "$WORK/out" 2> "$WORK/err" || rc=$?
  [[ $rc == "$code" ]] || { cat "$WORK/err" >&2; fail "'$*': exit $rc, expected $code"; }
  [[ $(wc -l < "$WORK/err") == 1 ]] || { cat "$WORK/err" >&2; fail "'$*': expected exactly one line on stderr"; }
  grep -q -- "$pattern" "$WORK/err" || { cat "$WORK/err" >&2; fail "'$*': stderr does not say '$pattern'"; }
  if grep -q 's3cr3tPW' "$WORK/err"; then fail "'$*': the password shows in the error"; fi
}
run() { echo run --brokers "$KT_BROKERS" --topic "$topic"; }

# Usage: exit 2.
expect 2 "unknown option\|Unknown option" run --bogus
expect 2 "--brokers is required" run --topic "$topic" --db "$db_uri"
expect 2 "--db: database name" $(run) --db "mysql://kt:s3cr3tPW@127.0.0.1/no-such"
expect 2 "--db: expected mysql://" $(run) --db "postgres://kt:s3cr3tPW@127.0.0.1/x"
expect 2 "--db: no database" $(run) --db "mysql://kt:s3cr3tPW@127.0.0.1"
expect 2 "--interval" $(run) --db "$db_uri" --interval -1
expect 2 "--max-per-partition" $(run) --db "$db_uri" --max-per-partition 0
expect 2 "--mode" $(run) --db "$db_uri" --mode sometimes
expect 2 "--topic" run --brokers "$KT_BROKERS" --topic "bad/topic" --db "$db_uri"
expect 2 "-X" $(run) --db "$db_uri" -X no.such.property=1
expect 2 "unknown command 'frobnicate' (try 'ktally --help')" frobnicate

# Dependencies refusing us: exit 3, within the start-up timeout.
expect 3 "Kafka" run --brokers 127.0.0.1:1 --topic "$topic" --db "$db_uri" --startup-timeout 2
expect 3 "Access denied" $(run) --db "mysql://kt:s3cr3tPW@$KT_MYSQL_HOST:$KT_MYSQL_PORT/$db"
expect 3 "Unknown database" $(run) --db "$KT_DB_URI_BASE/no_such_db_$RUN_ID"
expect 3 "Kafka\|MySQL" $(run) --db "mysql://kt@127.0.0.1:1/$db" --startup-timeout 2
# The mock broker invents any topic a client asks about; make one unknown.
ghost=ghost_$RUN_ID
kt_ctl topic-error "$ghost" UNKNOWN_TOPIC_OR_PART > /dev/null
expect 3 "topic '$ghost'" run --brokers "$KT_BROKERS" --topic "$ghost" --db "$db_uri"

[[ $(kt_sql "$db" "SHOW TABLES" | wc -l) == 0 ]] || fail "a failed start created tables"
note "$TEST_NAME: every bad configuration refused with one line, no table created"
