-- ktally schema for --kind ledger (MariaDB / MySQL, InnoDB): per-account
-- balances updated exactly once per transaction id. Applied by
-- `ktally run --kind ledger` when absent. Every statement is safe to run
-- again. Keys compare byte for byte (utf8mb4_nopad_bin): 'ACC-1' and
-- 'acc-1 ' are different accounts, as they are in the messages. Topics
-- too (ascii_bin, as in common.sql); the *_at times are UTC. The LATEST
-- schema, like common.sql.

CREATE TABLE IF NOT EXISTS account_balance (
  account    VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin PRIMARY KEY,
  balance    DECIMAL(20,4) NOT NULL,
  updated_at DATETIME(3)   NOT NULL DEFAULT CURRENT_TIMESTAMP(3)
) ENGINE = InnoDB;

-- Every transaction applied, once: the duplicate check of the next ones.
CREATE TABLE IF NOT EXISTS ledger_applied (
  txn         VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin PRIMARY KEY,
  account     VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
  amount      DECIMAL(20,4) NOT NULL,
  balance     DECIMAL(20,4) NOT NULL,  -- the account's balance after it
  ts          DATETIME      NOT NULL,
  topic       VARCHAR(249)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  `partition` INT           NOT NULL,
  `offset`    BIGINT        NOT NULL,
  applied_at  DATETIME(3)   NOT NULL DEFAULT CURRENT_TIMESTAMP(3)
) ENGINE = InnoDB;

-- Transactions refused by the business rule (a debit below zero): final,
-- like applied ones, so a replay decides the same way.
CREATE TABLE IF NOT EXISTS ledger_rejected (
  txn         VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin PRIMARY KEY,
  account     VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
  amount      DECIMAL(20,4) NOT NULL,
  reason      VARCHAR(32)   NOT NULL,
  ts          DATETIME      NOT NULL,
  topic       VARCHAR(249)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  `partition` INT           NOT NULL,
  `offset`    BIGINT        NOT NULL,
  rejected_at DATETIME(3)   NOT NULL DEFAULT CURRENT_TIMESTAMP(3)
) ENGINE = InnoDB;
