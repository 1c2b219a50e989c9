-- Schema version 4 -> 5: a replay's range is part of what the replay is
-- (ktally_job.replay_range). A replay named with --job keeps its offsets
-- under replay.NAME; run again with another --from/--until it resumed from
-- the first range's offsets, counting part of the new range not at all and
-- failing where the first range ended past the second (found by
-- scripts/soak, seed 306441). Replays recorded before this version have ''
-- (not recorded), which matches any range. See 002 for how a migration
-- file runs.

ALTER TABLE IF EXISTS ktally_job ADD COLUMN IF NOT EXISTS
  replay_range TEXT CHARACTER SET ascii COLLATE ascii_bin NOT NULL DEFAULT '' AFTER topics;


-- ktally: in the version transaction
