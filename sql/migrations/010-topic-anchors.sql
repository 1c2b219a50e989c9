-- Schema version 9 -> 10: the anchor of each partition, the last record a
-- job counted of it (its offset, Kafka timestamp and a hash of its key and
-- value: src/base/anchor.h), stored with the offset (kafka_offset) or, in
-- idempotent mode, with the counts (ktally_coverage), and compared with
-- the record at that offset before a job reads on. Without it, a topic
-- deleted and created again whose new log had grown past the stored
-- offsets was read on from them as if it were the old one. Rows written
-- before this version have none (NULL) until their next batch. See 002
-- for how a migration file runs.

ALTER TABLE IF EXISTS kafka_offset
  ADD COLUMN IF NOT EXISTS anchor_offset BIGINT NULL AFTER `offset`,
  ADD COLUMN IF NOT EXISTS anchor_time BIGINT NULL AFTER anchor_offset,
  ADD COLUMN IF NOT EXISTS anchor_hash BIGINT UNSIGNED NULL AFTER anchor_time;

ALTER TABLE IF EXISTS ktally_coverage
  ADD COLUMN IF NOT EXISTS anchor_offset BIGINT NULL AFTER covered,
  ADD COLUMN IF NOT EXISTS anchor_time BIGINT NULL AFTER anchor_offset,
  ADD COLUMN IF NOT EXISTS anchor_hash BIGINT UNSIGNED NULL AFTER anchor_time;

-- ktally: in the version transaction
