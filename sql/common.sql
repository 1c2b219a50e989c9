-- What every ktally job shares (MariaDB / MySQL, InnoDB), whatever its kind
-- and mode: where it stands (kafka_offset), what it committed
-- (ktally_batches), what it is (ktally_job) and what its table holds
-- (ktally_table). Applied before any kind's own tables (counts.sql,
-- idempotent.sql, ledger.sql). Every statement is safe to run again.
-- `offset` and `partition` are reserved words: always backquoted.

-- The design's offsets, one row per job, topic and partition: the next offset
-- to read. Updated in the same transaction as error_log, fenced on the
-- offset the batch was planned from.
CREATE TABLE IF NOT EXISTS kafka_offset (
  job           VARCHAR(64)  CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  topic         VARCHAR(249) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  `partition`   INT          NOT NULL,
  `offset`      BIGINT       NOT NULL,
  -- The anchor: the last record counted below `offset`, written with it:
  -- its offset, its Kafka timestamp (ms; -1: none) and a hash of its key
  -- and value (src/base/anchor.h). A job checks the record at that offset
  -- before it reads on: another one there means another log (a topic
  -- deleted and created again). NULL until a batch counts a record, and
  -- after `ktally reset` moved the offset.
  anchor_offset BIGINT          NULL,
  anchor_time   BIGINT          NULL,
  anchor_hash   BIGINT UNSIGNED NULL,
  PRIMARY KEY (job, topic, `partition`)
) ENGINE = InnoDB;

-- The audit trail: one row per partition per committed batch, written in
-- the same transaction as the offsets. `ktally audit` checks that the rows
-- of each partition form one chain without gap or overlap up to the stored
-- offset, and that their ERROR totals agree with the tables they went to.
CREATE TABLE IF NOT EXISTS ktally_batches (
  id              BIGINT       NOT NULL AUTO_INCREMENT,
  job             VARCHAR(64)  CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  topic           VARCHAR(249) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  `partition`     INT          NOT NULL,
  from_offset     BIGINT       NOT NULL,
  until_offset    BIGINT       NOT NULL,
  record_count    BIGINT       NOT NULL,
  line_count      BIGINT       NOT NULL,
  error_lines     BIGINT       NOT NULL,
  malformed_lines BIGINT       NOT NULL,
  -- a range `reset` moved past: never counted, and never counted again by
  -- a recount (which starts after it); --audit-keep folds around it
  skipped         TINYINT      NOT NULL DEFAULT 0,
  target          VARCHAR(64)  CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  -- job-pid@host of the committer: job 64 + pid + a host name up to 255,
  -- and ktally cuts it to this size (KT_MEMBER_CHARS) rather than fail.
  member          VARCHAR(400) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT '',
  committed_at    DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),  -- UTC
  -- Not unique: an idempotent job whose offsets were moved back commits a
  -- range again, harmlessly, and the audit shows the overlap.
  PRIMARY KEY (id),
  KEY by_chain (job, topic, `partition`, from_offset),
  KEY by_time (job, topic, committed_at)
) ENGINE = InnoDB;

-- A job: its kind and mode, where its offsets live, the table it writes
-- and the topics it reads (sorted, comma separated).
CREATE TABLE IF NOT EXISTS ktally_job (
  job        VARCHAR(64)  CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  kind       VARCHAR(16)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  mode       VARCHAR(16)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  offsets    VARCHAR(8)   CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  output     VARCHAR(64)  CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  topics     TEXT         CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  -- a replay's --from/--until, "P:FROM-UNTIL,..." by partition; '' for
  -- other jobs (and for replays recorded before schema version 5)
  replay_range TEXT       CHARACTER SET ascii COLLATE ascii_bin NOT NULL DEFAULT '',
  -- a replay given by time: the moments asked for, FROM/UNTIL in UTC to the
  -- millisecond (UNTIL '..': each partition's end then), which resolved to
  -- replay_range once; '' for other replays and jobs
  replay_times TEXT       CHARACTER SET ascii COLLATE ascii_bin NOT NULL DEFAULT '',
  created_at DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),  -- UTC
  PRIMARY KEY (job),
  KEY by_output (output)
) ENGINE = InnoDB;

-- A table ktally writes: what its rows mean. Every job and replay that
-- writes it must mean the same: counts per the same bucket, of the same
-- levels read by the same pattern and time format, by the same dimensions
-- and sums ('' where a setting does not apply, or is the default).
CREATE TABLE IF NOT EXISTS ktally_table (
  name        VARCHAR(64)  CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  holds       VARCHAR(16)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  bucket      VARCHAR(8)   CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  -- --input: '' (text lines), json, logfmt or otlp-json
  input       VARCHAR(16)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL DEFAULT '',
  levels      TEXT         CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  pattern     TEXT         CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  time_format TEXT         CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  -- --time-field, --level-field: paths, '' for the input's defaults
  time_field  TEXT         CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT (''),
  level_field TEXT         CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT (''),
  dimensions  TEXT         CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  sums        TEXT         CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  first_job   VARCHAR(64)  CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  created_at  DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),  -- UTC
  PRIMARY KEY (name)
) ENGINE = InnoDB;

-- What `ktally forget` removed of a job: per table its batches wrote to,
-- how many batch rows and the ERROR lines they recorded. The rows those
-- lines were counted into stay (forget never touches output), so `ktally
-- audit` adds these lines to what the batches of that table recorded.
CREATE TABLE IF NOT EXISTS ktally_forgotten (
  id           BIGINT       NOT NULL AUTO_INCREMENT,
  job          VARCHAR(64)  CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  target       VARCHAR(64)  CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  batches      BIGINT       NOT NULL,
  error_lines  BIGINT       NOT NULL,
  forgotten_at DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),  -- UTC
  PRIMARY KEY (id),
  KEY by_target (target)
) ENGINE = InnoDB;
