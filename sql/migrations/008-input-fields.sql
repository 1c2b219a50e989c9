-- Schema version 7 -> 8: what a count table's rows were read from is part
-- of what they mean (ktally_table): `input` (--input: '' for text lines,
-- json, logfmt or otlp-json) and the paths of the time and the level
-- (--time-field, --level-field; '' for the input's defaults). Tables
-- recorded before this version were counted from text lines with the
-- defaults, which '' says. See 002 for how a migration file runs.

ALTER TABLE IF EXISTS ktally_table
  ADD COLUMN IF NOT EXISTS input VARCHAR(16) CHARACTER SET ascii COLLATE ascii_bin NOT NULL DEFAULT '' AFTER bucket,
  ADD COLUMN IF NOT EXISTS time_field TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT ('') AFTER time_format,
  ADD COLUMN IF NOT EXISTS level_field TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT ('') AFTER time_field;


-- ktally: in the version transaction
