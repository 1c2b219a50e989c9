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
