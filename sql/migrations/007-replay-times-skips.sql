-- Schema version 6 -> 7: what a replay by time and a reset's skip are,
-- recorded so that nothing reads them again.
--
-- ktally_job.replay_times: a replay given by time (--from-datetime,
-- --until-datetime, --last) keeps the moments it was asked for beside the
-- offsets they resolved to (replay_range), and its name derives from the
-- moments: run again, it takes the stored offsets instead of asking Kafka
-- anew. Before, a rerun asked again and, where a partition had grown past
-- the range's end, resolved another range, another replay, and counted the
-- first one's records again.
--
-- ktally_batches.skipped: an audit row of offsets `reset` moved past
-- (never counted). A recount (`reset --rebuild` of a range) starts after
-- the last of them instead of counting them, and --audit-keep folds the
-- rows between them, never across one. Rows written before this version
-- are marked by what a reset wrote: no record, and the member
-- reset-PID@host. See 002 for how a migration file runs.

ALTER TABLE IF EXISTS ktally_job ADD COLUMN IF NOT EXISTS
  replay_times TEXT CHARACTER SET ascii COLLATE ascii_bin NOT NULL DEFAULT '' AFTER replay_range;

ALTER TABLE IF EXISTS ktally_batches ADD COLUMN IF NOT EXISTS
  skipped TINYINT NOT NULL DEFAULT 0 AFTER malformed_lines;

-- ktally: in the version transaction
-- ktally: if ktally_batches
UPDATE ktally_batches SET skipped = 1
 WHERE record_count = 0 AND member REGEXP '^reset-[0-9]+@';
