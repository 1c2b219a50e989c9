-- ktally's counts, transactional mode (MariaDB, InnoDB): the table the
-- default kind writes, beside sql/common.sql (what every job shares).
-- Applied by `ktally init-db`, and by `ktally run` when absent. Every
-- statement is safe to run again.
--
-- Like every file of sql/, this is the LATEST schema (version KT_SCHEMA_VERSION, src/store/schema.h):
-- fresh databases are created from it, and sql/migrations/ bring older ones
-- forward. Change it only together with a new migration.
--
-- Names (jobs, topics, tables) compare byte for byte: Kafka's topic names
-- are case-sensitive, so `CaseT` and `caset` are two topics. Times ktally
-- stamps itself (committed_at) are UTC: every session runs at '+00:00'.

-- The design's result table: ERROR lines per minute (the log's own, naive
-- timestamps, truncated to the minute).
CREATE TABLE IF NOT EXISTS error_log (
  log_time  DATETIME PRIMARY KEY,
  log_count BIGINT NOT NULL DEFAULT 0
) ENGINE = InnoDB;
