-- ktally schema for --mode idempotent (MariaDB / MySQL, InnoDB). Applied by
-- `ktally run --mode idempotent` (and `ktally init-db --mode idempotent`)
-- when absent. Every statement is safe to run again. The LATEST schema,
-- like schema.sql (whose notes on names and times hold here too).

-- Each partition's ERROR counts per minute. Counts are only ever added
-- together with the offsets they include (ktally_coverage), in one
-- transaction, so no offset is counted twice.
CREATE TABLE IF NOT EXISTS error_log_partition (
  job         VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  topic       VARCHAR(249) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  `partition` INT          NOT NULL,
  log_time    DATETIME     NOT NULL,
  log_count   BIGINT       NOT NULL,
  PRIMARY KEY (job, topic, `partition`, log_time),
  KEY by_time (log_time)
) ENGINE = InnoDB;

-- Which offsets each partition's counts include: ascending ranges "A-B,..."
-- (usually one). A batch counts only offsets outside the set it planned
-- from, and adds its counts only if the set is still that one (read FOR
-- UPDATE), extending it in the same transaction: a repeated, late or
-- concurrent write, or a rewind of the offsets, counts nothing twice.
CREATE TABLE IF NOT EXISTS ktally_coverage (
  job         VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  topic       VARCHAR(249) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  `partition` INT          NOT NULL,
  covered     MEDIUMTEXT   NOT NULL,
  PRIMARY KEY (job, topic, `partition`)
) ENGINE = InnoDB;

-- Offsets, as in schema.sql: committed after the output, in their own
-- transaction (or kept in Kafka with --offsets kafka).
CREATE TABLE IF NOT EXISTS kafka_offset (
  job         VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  topic       VARCHAR(249) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
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
  job             VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  topic           VARCHAR(249) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  `partition`     INT          NOT NULL,
  from_offset     BIGINT       NOT NULL,
  until_offset    BIGINT       NOT NULL,
  record_count    BIGINT       NOT NULL,
  line_count      BIGINT       NOT NULL,
  error_lines     BIGINT       NOT NULL,
  malformed_lines BIGINT       NOT NULL,
  target          VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  member          VARCHAR(400) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT '',
  committed_at    DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),  -- UTC
  -- Not unique: an idempotent job whose offsets were moved back commits a
  -- range again, harmlessly, and the audit shows the overlap.
  PRIMARY KEY (id),
  KEY by_chain (job, topic, `partition`, from_offset),
  KEY by_time (job, topic, committed_at)
) ENGINE = InnoDB;

-- The per-minute counts dashboards read, exactly as in transactional mode.
CREATE VIEW IF NOT EXISTS error_log AS
  SELECT log_time, CAST(SUM(log_count) AS SIGNED) AS log_count
  FROM error_log_partition
  GROUP BY log_time;
