# tests/integration/schema-v1/lib.sh - helpers for the schema-version tests
# (140-149), sourced after lib.sh. Beside it: version 1's DDL, as ktally
# created it before schema versions (main at ae0cb9c), kept verbatim: the
# CI machine has only the new binary, so older databases are made from it.

KT_V1=$KT_SRC/tests/integration/schema-v1

kt_v1_db() {  # kt_v1_db NAME FILE...: a database of version 1's FILEs (schema idempotent ledger); prints its URI
  local name=$1 uri db f; shift
  uri=$(kt_new_db "$name"); db=$(kt_db_name "$uri")
  for f in "$@"; do kt_sql "$db" "$(cat "$KT_V1/$f.sql")"; done
  echo "$uri"
}

kt_v1_replay_table() {  # kt_v1_replay_table DB TABLE: a replay table as version 1 made it
  kt_sql "$1" "CREATE TABLE \`$2\` (log_time DATETIME PRIMARY KEY, log_count INT NOT NULL DEFAULT 0) ENGINE = InnoDB"
}

kt_copy_rows() {  # kt_copy_rows FROM_DB TO_DB TABLE...: every row, as it is (the columns
  local from=$1 to=$2 t cols; shift 2  # the older table has: later versions added some)
  for t in "$@"; do
    cols=$(kt_sql information_schema "SELECT GROUP_CONCAT(CONCAT('\`', column_name, '\`')
             ORDER BY ordinal_position) FROM columns WHERE table_schema = '$to' AND table_name = '$t'")
    kt_sql "$to" "INSERT INTO \`$t\` ($cols) SELECT $cols FROM \`$from\`.\`$t\`"
  done
}

kt_shape() {  # kt_shape DB: its tables, columns and keys as information_schema shows them
  kt_sql information_schema "
    SELECT table_name, table_type, COALESCE(engine, '-'), COALESCE(table_collation, '-')
      FROM tables WHERE table_schema = '$1' ORDER BY table_name;
    SELECT table_name, ordinal_position, column_name, column_type, is_nullable,
           COALESCE(column_default, '-'), COALESCE(character_set_name, '-'),
           COALESCE(collation_name, '-'), column_key, extra
      FROM columns WHERE table_schema = '$1' ORDER BY table_name, ordinal_position;
    SELECT table_name, index_name, seq_in_index, column_name, non_unique
      FROM statistics WHERE table_schema = '$1' ORDER BY table_name, index_name, seq_in_index"
}

kt_check_same_shape() {  # kt_check_same_shape DB_A DB_B WHAT [TABLE...]: both shapes are equal, but for the TABLEs
  local skip='^$' t
  for t in "${@:4}"; do skip+="|^$t"$'\t'; done
  kt_shape "$1" | grep -Ev "$skip" > "$WORK/shape_a"
  kt_shape "$2" | grep -Ev "$skip" > "$WORK/shape_b"
  diff "$WORK/shape_a" "$WORK/shape_b" > "$WORK/shape_diff" \
    || { head -20 "$WORK/shape_diff" >&2; fail "$3: $1 and $2 differ in shape"; }
}

# The version this ktally creates and migrates to, as src/store/schema.h says.
KT_SCHEMA_LATEST=$(sed -n 's/^#define KT_SCHEMA_VERSION \([0-9]*\)$/\1/p' "$KT_SRC/src/store/schema.h")
[[ -n $KT_SCHEMA_LATEST ]] || fail "no KT_SCHEMA_VERSION in src/store/schema.h"

kt_schema_version() {  # kt_schema_version DB: the recorded version, or "none"
  kt_sql "$1" "SELECT COALESCE(MAX(version), 'none') FROM ktally_schema" 2> /dev/null || echo none
}
