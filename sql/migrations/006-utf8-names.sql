-- Schema version 5 -> 6: job and table names may be UTF-8 (log text and
-- the names people give to what they count are, in the wild): every column
-- that holds a job's or a table's name becomes utf8mb4 with a binary
-- collation, so names still compare byte for byte. Topic names stay ASCII
-- (Kafka's own rule). See 002 for how a migration file runs; each
-- statement sets a column whatever state it was in, so a kill -9 between
-- two is harmless. Besides these, src/store/schema.c changes the job
-- column of every per-topic count table (NAME_topic of `run --table NAME`
-- in idempotent mode), which only the database knows.

ALTER TABLE IF EXISTS kafka_offset
  MODIFY job VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL;

ALTER TABLE IF EXISTS ktally_batches
  MODIFY job    VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  MODIFY target VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL;

ALTER TABLE IF EXISTS ktally_job
  MODIFY job    VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  MODIFY output VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL;

ALTER TABLE IF EXISTS ktally_table
  MODIFY name      VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  MODIFY first_job VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL;

ALTER TABLE IF EXISTS ktally_forgotten
  MODIFY job    VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  MODIFY target VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL;

ALTER TABLE IF EXISTS ktally_coverage
  MODIFY job VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL;


-- ktally: in the version transaction
