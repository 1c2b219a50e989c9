-- ktally schema (MariaDB / MySQL, InnoDB). Applied by `ktally init-db`, and
-- by `ktally run` when the tables are absent. Every statement is safe to
-- run again. `offset` and `partition` are reserved words: always backquoted.

-- Seed 001's result table: ERROR lines per minute (the log's own, naive
-- timestamps, truncated to the minute).
CREATE TABLE IF NOT EXISTS error_log (
  log_time  DATETIME PRIMARY KEY,
  log_count INT NOT NULL DEFAULT 0
) ENGINE = InnoDB;

-- Seed 001's offsets, one row per job, topic and partition: the next offset
-- to read. Updated in the same transaction as error_log, fenced on the
-- offset the batch was planned from.
CREATE TABLE IF NOT EXISTS kafka_offset (
  job         VARCHAR(64)  NOT NULL,
  topic       VARCHAR(249) NOT NULL,
  `partition` INT          NOT NULL,
  `offset`    BIGINT       NOT NULL,
  PRIMARY KEY (job, topic, `partition`)
) ENGINE = InnoDB;

-- The audit trail: one row per partition per committed batch, written in
-- the same transaction as the offsets. `ktally audit` checks that the rows
-- of each partition form one chain without gap or overlap up to the stored
-- offset, and that their ERROR totals agree with the tables they went to.
CREATE TABLE IF NOT EXISTS ktally_batches (
  id              BIGINT       NOT NULL AUTO_INCREMENT,
  job             VARCHAR(64)  NOT NULL,
  topic           VARCHAR(249) NOT NULL,
  `partition`     INT          NOT NULL,
  from_offset     BIGINT       NOT NULL,
  until_offset    BIGINT       NOT NULL,
  record_count    BIGINT       NOT NULL,
  line_count      BIGINT       NOT NULL,
  error_lines     BIGINT       NOT NULL,
  malformed_lines BIGINT       NOT NULL,
  target          VARCHAR(64)  NOT NULL,
  member          VARCHAR(128) NOT NULL DEFAULT '',  -- client-id@host of the committer
  committed_at    DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  -- Not unique: an idempotent job whose offsets were moved back commits a
  -- range again, harmlessly, and the audit shows the overlap.
  PRIMARY KEY (id),
  KEY by_chain (job, topic, `partition`, from_offset),
  KEY by_time (job, topic, committed_at)
) ENGINE = InnoDB;
