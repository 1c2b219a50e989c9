-- Schema version 1 -> 2: names compare byte for byte,
-- counts are 64-bit, the committer's name fits, ktally's own times are UTC,
-- and idempotent mode's chunks become per-partition counts with the set of
-- offsets they cover (src/base/coverage.h).
--
-- How a migration file runs (src/store/schema.c): the statements up to the line
-- "-- ktally: in the version transaction" run one by one, and MariaDB
-- commits each by itself, so each must be safe to run again after a kill
-- -9 anywhere, and must leave what the statements after it need until
-- they are done: ALTER TABLE IF EXISTS ... MODIFY sets a column to a state
-- whatever state it was in, an INSERT ... ON DUPLICATE KEY UPDATE col =
-- VALUES(col) sets rows, a table is dropped only after what it held is
-- copied. The statements after that line run in ONE transaction together
-- with the row that records the new version, so they happen exactly once.
-- A line "-- ktally: if NAME..." before a statement runs it only where
-- each NAME exists as the migration starts (NAME:view, NAME:table: as
-- that): tables of a kind or mode the database never used are absent.
--
-- Besides these statements, src/store/schema.c widens log_count to BIGINT in
-- error_log and in every table a batch counted into (ktally_batches.target:
-- replay tables), where it is a narrower integer in a base table: which
-- tables those are is only known at run time.

ALTER TABLE IF EXISTS kafka_offset
  MODIFY job   VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  MODIFY topic VARCHAR(249) CHARACTER SET ascii COLLATE ascii_bin NOT NULL;

ALTER TABLE IF EXISTS ktally_batches
  MODIFY job    VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  MODIFY topic  VARCHAR(249) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  MODIFY target VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  MODIFY member VARCHAR(400) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT '';

ALTER TABLE IF EXISTS ledger_applied
  MODIFY topic VARCHAR(249) CHARACTER SET ascii COLLATE ascii_bin NOT NULL;

ALTER TABLE IF EXISTS ledger_rejected
  MODIFY topic VARCHAR(249) CHARACTER SET ascii COLLATE ascii_bin NOT NULL;

-- The per-partition tables as development builds between chunks and
-- schema versions created them.
ALTER TABLE IF EXISTS error_log_partition
  MODIFY job       VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  MODIFY topic     VARCHAR(249) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  MODIFY log_count BIGINT NOT NULL;

ALTER TABLE IF EXISTS ktally_coverage
  MODIFY job   VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  MODIFY topic VARCHAR(249) CHARACTER SET ascii COLLATE ascii_bin NOT NULL;

-- Idempotent mode's chunks (error_log_chunk: counts per chunk; ktally_chunk:
-- how far each chunk's rows go) become counts per partition and the set of
-- offsets they include. Summing a partition's chunks keeps error_log, the
-- view, exactly as it was. A chunk covers [chunk_start, chunk_until),
-- touching chunks make one interval, and overlapping ones (an older ktally
-- wrote them after a rewind, and counted their overlap twice) are kept as
-- they are, for `ktally audit` to report. Both copies set rows rather than
-- add to them, so running them again changes nothing; the chunk tables go
-- only after both are in, error_log_chunk first (ktally_chunk is still
-- needed while it exists).
-- ktally: if error_log_chunk
CREATE TABLE IF NOT EXISTS error_log_partition (
  job         VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  topic       VARCHAR(249) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  `partition` INT          NOT NULL,
  log_time    DATETIME     NOT NULL,
  log_count   BIGINT       NOT NULL,
  PRIMARY KEY (job, topic, `partition`, log_time),
  KEY by_time (log_time)
) ENGINE = InnoDB;

-- ktally: if ktally_chunk
CREATE TABLE IF NOT EXISTS ktally_coverage (
  job         VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  topic       VARCHAR(249) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  `partition` INT          NOT NULL,
  covered     MEDIUMTEXT   NOT NULL,
  PRIMARY KEY (job, topic, `partition`)
) ENGINE = InnoDB;

-- ktally: if error_log_chunk
INSERT INTO error_log_partition (job, topic, `partition`, log_time, log_count)
  SELECT job, topic, `partition`, log_time, SUM(log_count) FROM error_log_chunk
  GROUP BY job, topic, `partition`, log_time
  ON DUPLICATE KEY UPDATE log_count = VALUES(log_count);

-- ktally: if ktally_chunk
SET SESSION group_concat_max_len = 16777215;

-- ktally: if ktally_chunk
INSERT INTO ktally_coverage (job, topic, `partition`, covered)
  SELECT job, topic, `partition`, GROUP_CONCAT(CONCAT(a, '-', b) ORDER BY a, b SEPARATOR ',')
  FROM (SELECT job, topic, `partition`, island, MIN(chunk_start) AS a, MAX(chunk_until) AS b
        FROM (SELECT job, topic, `partition`, chunk_start, chunk_until,
                     SUM(starts) OVER (PARTITION BY job, topic, `partition`
                                       ORDER BY chunk_start) AS island
              FROM (SELECT job, topic, `partition`, chunk_start, chunk_until,
                           IF(chunk_start = LAG(chunk_until) OVER (
                                PARTITION BY job, topic, `partition` ORDER BY chunk_start),
                              0, 1) AS starts
                    FROM ktally_chunk WHERE chunk_until > chunk_start) AS chunks) AS marked
        GROUP BY job, topic, `partition`, island) AS intervals
  GROUP BY job, topic, `partition`
  ON DUPLICATE KEY UPDATE covered = VALUES(covered);

-- ktally: if error_log_chunk error_log:view
CREATE OR REPLACE VIEW error_log AS
  SELECT log_time, CAST(SUM(log_count) AS SIGNED) AS log_count
  FROM error_log_partition
  GROUP BY log_time;

DROP TABLE IF EXISTS error_log_chunk;

DROP TABLE IF EXISTS ktally_chunk;

-- ktally: in the version transaction

-- Version 1 stamped these in the session's time zone, the server's global
-- one (ktally never set its own): from now on they are UTC. A time in the
-- hour a DST fall-back repeats is ambiguous, and CONVERT_TZ takes one of
-- its two readings, so historic rows of that hour may be an hour off,
-- their order by id is unaffected.
-- ktally: if ktally_batches
UPDATE ktally_batches SET committed_at = CONVERT_TZ(committed_at, @@global.time_zone, '+00:00');
-- ktally: if account_balance
UPDATE account_balance SET updated_at = CONVERT_TZ(updated_at, @@global.time_zone, '+00:00');
-- ktally: if ledger_applied
UPDATE ledger_applied SET applied_at = CONVERT_TZ(applied_at, @@global.time_zone, '+00:00');
-- ktally: if ledger_rejected
UPDATE ledger_rejected SET rejected_at = CONVERT_TZ(rejected_at, @@global.time_zone, '+00:00');
