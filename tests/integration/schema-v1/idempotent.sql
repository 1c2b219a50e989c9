-- ktally schema for --mode idempotent (MariaDB / MySQL, InnoDB). Applied by
-- `ktally run --mode idempotent` (and `ktally init-db --mode idempotent`)
-- when absent. Every statement is safe to run again.

-- What each chunk of a partition contributed: chunks are aligned offset
-- ranges [chunk_start, next multiple of the chunk size), and a chunk's rows
-- are always replaced whole, so writing a chunk twice never adds twice.
CREATE TABLE IF NOT EXISTS error_log_chunk (
  job         VARCHAR(64)  NOT NULL,
  topic       VARCHAR(249) NOT NULL,
  `partition` INT          NOT NULL,
  chunk_start BIGINT       NOT NULL,
  log_time    DATETIME     NOT NULL,
  log_count   INT          NOT NULL,
  PRIMARY KEY (job, topic, `partition`, chunk_start, log_time),
  KEY by_time (log_time)
) ENGINE = InnoDB;

-- How far each chunk's rows go: [chunk_start, chunk_until). A chunk is only
-- ever replaced by a longer prefix of itself, so a late or replayed write of
-- a shorter prefix changes nothing.
CREATE TABLE IF NOT EXISTS ktally_chunk (
  job         VARCHAR(64)  NOT NULL,
  topic       VARCHAR(249) NOT NULL,
  `partition` INT          NOT NULL,
  chunk_start BIGINT       NOT NULL,
  chunk_until BIGINT       NOT NULL,
  PRIMARY KEY (job, topic, `partition`, chunk_start)
) ENGINE = InnoDB;

-- Offsets, as in schema.sql: committed after the output, in their own
-- transaction (or kept in Kafka with --offsets kafka).
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

-- The per-minute counts dashboards read, exactly as in transactional mode.
CREATE VIEW IF NOT EXISTS error_log AS
  SELECT log_time, CAST(SUM(log_count) AS SIGNED) AS log_count
  FROM error_log_chunk
  GROUP BY log_time;
