-- The schema version of this database's ktally tables (MariaDB, InnoDB):
-- one row per version the database reached, the current one being the
-- highest. A database with ktally tables but without this table is at
-- version 1 (ktally 0.1.0 and older kept no version). Created with the
-- first version row before any other table of a fresh database, and at the
-- start of a migration; see src/store/schema.c.
CREATE TABLE IF NOT EXISTS ktally_schema (
  version    INT          NOT NULL,
  ktally     VARCHAR(32)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,  -- the ktally that got it there
  reached_at DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),           -- UTC
  PRIMARY KEY (version)
) ENGINE = InnoDB;

-- Which database this is: one row, a random identity made with the
-- schema (in the transaction that records its version, by ktally, never
-- by the server's UUID(), which a statement-based replica would compute
-- again), inherited by every copy of the database: a Galera node, a
-- replica, a restore from a backup. Every connection ktally makes compares
-- it with the identity the process saw first, and refuses a server that
-- holds another (a hosts list naming an unrelated server), so that a job
-- never counts into two databases. See sql/HA.md.
CREATE TABLE IF NOT EXISTS ktally_database (
  one        TINYINT      NOT NULL DEFAULT 1,                            -- one row only
  id         CHAR(36)     CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  created_at DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),           -- UTC
  PRIMARY KEY (one),
  CONSTRAINT ktally_database_one CHECK (one = 1)
) ENGINE = InnoDB;
