-- Schema version 3 -> 4: idempotent mode keeps its
-- counts per job, topic and minute (error_log_topic), no longer per
-- partition too (error_log_partition). Sparse log time made nearly every
-- line a row of its own per partition: 64 partitions wrote up to 64 rows
-- where transactional mode writes one. The covered offsets stay per
-- partition (ktally_coverage): they, not the rows, keep every offset
-- counted once. See 002 for how a migration file runs.
--
-- The sums are copied with upserts that set rows, so running the copy
-- again changes nothing; the old table goes only after the view reads the
-- new one. error_log reads the same before and after.

-- ktally: if error_log_partition:table
CREATE TABLE IF NOT EXISTS error_log_topic (
  job         VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  topic       VARCHAR(249) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  log_time    DATETIME     NOT NULL,
  log_count   BIGINT       NOT NULL,
  PRIMARY KEY (job, topic, log_time),
  KEY by_time (log_time)
) ENGINE = InnoDB;

-- ktally: if error_log_partition:table
INSERT INTO error_log_topic (job, topic, log_time, log_count)
  SELECT job, topic, log_time, SUM(log_count) FROM error_log_partition
  GROUP BY job, topic, log_time
  ON DUPLICATE KEY UPDATE log_count = VALUES(log_count);

-- ktally: if error_log_partition:table error_log:view
CREATE OR REPLACE VIEW error_log AS
  SELECT log_time, CAST(SUM(log_count) AS SIGNED) AS log_count
  FROM error_log_topic
  GROUP BY log_time;

-- ktally: if error_log_partition:table
DROP TABLE IF EXISTS error_log_partition;


-- ktally: in the version transaction
