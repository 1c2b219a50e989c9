-- A dead-letter table (`--dead-letters NAME`): the malformed lines of the
-- batches a count job committed, each once, written in the batch's own
-- transaction. `dead_letters` is the name this file gives it; ktally
-- creates it under the name given (and checks one that exists against
-- these columns), when a job that names it starts. Safe to run again.
--
-- Like every file of sql/, this is the LATEST schema.
--
-- A line is known by where it is, (topic, partition, offset, line_no): a
-- batch that reads it again (a replay, a rebuild, another job over the
-- topic) writes nothing twice (INSERT ... ON DUPLICATE KEY UPDATE, no
-- change). Lines are not always UTF-8: `raw` holds the bytes as they were,
-- cut at 2048 (`raw_bytes` is the whole line's length).
CREATE TABLE IF NOT EXISTS dead_letters (
  topic       VARCHAR(249) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  `partition` INT          NOT NULL,
  `offset`    BIGINT       NOT NULL,
  -- its number among the record's lines, from 1, counting every '\n'
  line_no     INT          NOT NULL,
  raw         VARBINARY(2048) NOT NULL,
  raw_bytes   BIGINT       NOT NULL,
  -- shape, time, range or field (ktally-run(1), LOG LINES)
  reason      VARCHAR(16)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  -- the job whose batch kept it first
  job         VARCHAR(64)  CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  kept_at     DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),  -- UTC
  PRIMARY KEY (topic, `partition`, `offset`, line_no)
) ENGINE = InnoDB;
