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
