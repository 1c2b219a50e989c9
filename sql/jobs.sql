-- What a job is and what a table holds (MariaDB, InnoDB): the settings that
-- a job's results depend on, stored when it first commits and compared at
-- every start, by every group member and every replay (src/identity.c).
-- A change that would mix results in one table is refused. Every statement
-- is safe to run again.

-- A job: its kind and mode, where its offsets live, the table it writes
-- and the topics it reads (sorted, comma separated).
CREATE TABLE IF NOT EXISTS ktally_job (
  job        VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  kind       VARCHAR(16)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  mode       VARCHAR(16)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  offsets    VARCHAR(8)   CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  output     VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  topics     TEXT         CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  created_at DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),  -- UTC
  PRIMARY KEY (job),
  KEY by_output (output)
) ENGINE = InnoDB;

-- A table ktally writes: what its rows mean. Every job and replay that
-- writes it must mean the same: counts per the same bucket, of the same
-- levels read by the same pattern and time format, by the same dimensions
-- and sums ('' where a setting does not apply, or is the default).
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
  created_at  DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),  -- UTC
  PRIMARY KEY (name)
) ENGINE = InnoDB;
