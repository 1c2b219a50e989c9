-- Schema version 2 -> 3: a job is its settings. Adds
-- ktally_job and ktally_table (sql/common.sql); see 002 for how a migration
-- file runs.
--
-- Jobs that committed before this version get their row from what the
-- database knows of them (the audit trail: the table each wrote, its
-- topics; its covered sets: idempotent; offsets in MySQL or not), so that
-- a later run of another kind or mode is refused for them too. What the
-- database never recorded (bucket, levels, pattern) is recorded by the
-- first commit after the upgrade.

CREATE TABLE IF NOT EXISTS ktally_job (
  job        VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  kind       VARCHAR(16)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  mode       VARCHAR(16)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  offsets    VARCHAR(8)   CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  output     VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  topics     TEXT         CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  created_at DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (job),
  KEY by_output (output)
) ENGINE = InnoDB;

CREATE TABLE IF NOT EXISTS ktally_table (
  name        VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  holds       VARCHAR(16)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  bucket      VARCHAR(8)   CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  levels      TEXT         CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  pattern     TEXT         CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  time_format TEXT         CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  dimensions  TEXT         CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  sums        TEXT         CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  first_job   VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  created_at  DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (name)
) ENGINE = InnoDB;

-- ktally: in the version transaction
-- ktally: if ktally_batches ktally_coverage
INSERT IGNORE INTO ktally_job (job, kind, mode, offsets, output, topics)
  SELECT b.job, IF(MIN(b.target) = 'account_balance', 'ledger', 'count'),
         IF(EXISTS (SELECT 1 FROM ktally_coverage c WHERE c.job = b.job), 'idempotent',
            'transactional'),
         IF(EXISTS (SELECT 1 FROM kafka_offset o WHERE o.job = b.job)
            OR NOT EXISTS (SELECT 1 FROM ktally_coverage c WHERE c.job = b.job), 'mysql', 'kafka'),
         MIN(b.target), GROUP_CONCAT(DISTINCT b.topic ORDER BY b.topic SEPARATOR ',')
  FROM ktally_batches b GROUP BY b.job;
-- ktally: if ktally_batches
INSERT IGNORE INTO ktally_job (job, kind, mode, offsets, output, topics)
  SELECT b.job, IF(MIN(b.target) = 'account_balance', 'ledger', 'count'), 'transactional',
         'mysql', MIN(b.target), GROUP_CONCAT(DISTINCT b.topic ORDER BY b.topic SEPARATOR ',')
  FROM ktally_batches b GROUP BY b.job;
