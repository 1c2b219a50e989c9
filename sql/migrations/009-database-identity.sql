-- Schema version 8 -> 9: the database's identity (ktally_database, see
-- version.sql): a random id, one row, which every copy of the database
-- inherits (Galera nodes, replicas, restores), and which ktally compares
-- at every connection: a hosts list naming an unrelated server split a
-- job between two databases, each counting the topic for itself. The
-- table is version.sql's, which every migration applies first; its row is
-- written by src/store/migrations.c in the transaction that records this
-- version (INSERT IGNORE: once), with an id ktally draws, never UUID() (a
-- statement-based replica would draw another). See 002 for how a
-- migration file runs.

CREATE TABLE IF NOT EXISTS ktally_database (
  one        TINYINT      NOT NULL DEFAULT 1,
  id         CHAR(36)     CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  created_at DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (one),
  CONSTRAINT ktally_database_one CHECK (one = 1)
) ENGINE = InnoDB;


-- ktally: in the version transaction
