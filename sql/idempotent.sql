-- ktally's counts, idempotent mode (MariaDB / MySQL, InnoDB), beside
-- sql/common.sql (where the offsets are, after the output, or in Kafka's
-- consumer group with --offsets kafka). Applied by
-- `ktally run --mode idempotent` (and `ktally init-db --mode idempotent`)
-- when absent. Every statement is safe to run again. The LATEST schema,
-- like counts.sql (whose notes on names and times hold here too).

-- Each job's and topic's ERROR counts per minute. Counts are only ever
-- added together with the offsets they include (ktally_coverage, per
-- partition), in one transaction, so no offset is counted twice. (Not per
-- partition: with sparse log time that made up to one row per line and
-- partition; version 4 folded them.)
CREATE TABLE IF NOT EXISTS error_log_topic (
  job         VARCHAR(64)  CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  topic       VARCHAR(249) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  log_time    DATETIME     NOT NULL,
  log_count   BIGINT       NOT NULL,
  PRIMARY KEY (job, topic, log_time),
  KEY by_time (log_time)
) ENGINE = InnoDB;

-- Which offsets each partition's counts include: ascending ranges "A-B,..."
-- (usually one). A batch counts only offsets outside the set it planned
-- from, and adds its counts only if the set is still that one (read FOR
-- UPDATE), extending it in the same transaction: a repeated, late or
-- concurrent write, or a rewind of the offsets, counts nothing twice.
CREATE TABLE IF NOT EXISTS ktally_coverage (
  job           VARCHAR(64)  CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  topic         VARCHAR(249) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  `partition`   INT          NOT NULL,
  covered       MEDIUMTEXT   NOT NULL,
  -- The anchor of the last record the counts include, as in kafka_offset
  -- (common.sql), but written with the counts: here it holds with the
  -- offsets stored after them, or in Kafka's consumer group (which goes
  -- with a deleted topic), and a rewind of those never moves it.
  anchor_offset BIGINT          NULL,
  anchor_time   BIGINT          NULL,
  anchor_hash   BIGINT UNSIGNED NULL,
  PRIMARY KEY (job, topic, `partition`)
) ENGINE = InnoDB;

-- The per-minute counts dashboards read, exactly as in transactional mode.
CREATE VIEW IF NOT EXISTS error_log AS
  SELECT log_time, CAST(SUM(log_count) AS SIGNED) AS log_count
  FROM error_log_topic
  GROUP BY log_time;
