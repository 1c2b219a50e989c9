/* Store.java - the seed's MySQL side: the stored offsets and
 * one batch's transaction (DB.localTx in the seed).
 *
 * Runs on the driver only, on one connection (the seed's pool never lends
 * more than one: foreachRDD runs one batch at a time). A batch commits its
 * per-minute upserts and every partition's offset row together, or nothing:
 * a fence that misses, or any SQL error, rolls back and is thrown, and the
 * program stops (the seed's "fail to update offset"). */
package ktally.peer;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.streaming.kafka010.OffsetRange;
import scala.Tuple2;

final class Store implements AutoCloseable {
  /* A fence missed: another writer moved the partition after this batch
   * was planned. Its counts are in the table; ours must not be. */
  static final class FenceMissed extends RuntimeException {
    private static final long serialVersionUID = 1L;

    FenceMissed(String message) {
      super(message);
    }
  }

  private static final DateTimeFormatter MINUTE = DateTimeFormatter.ofPattern("uuuu-MM-dd HH:mm:00");
  
  private final Connection conn;
  private final String job;
  private final PreparedStatement upsert, insertOffset, fence;

  Store(Db db, String job) throws SQLException {
    this.job = job;
    /* useAffectedRows=false (the driver's default, stated here because the
     * fence depends on it): an UPDATE reports the rows it matched, so a
     * partition that read nothing (SET offset = the same value) still
     * answers 1, as in the seed. */
    conn = DriverManager.getConnection(db.jdbcUrl() + "?useAffectedRows=false", db.user, db.password);
    conn.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
    conn.setAutoCommit(false);
    upsert = conn.prepareStatement("INSERT INTO error_log (log_time, log_count) VALUES (?, ?) "
        + "ON DUPLICATE KEY UPDATE log_count = log_count + ?");
    insertOffset = conn.prepareStatement(
        "INSERT IGNORE INTO kafka_offset (job, topic, `partition`, `offset`) VALUES (?, ?, ?, ?)");
    fence = conn.prepareStatement("UPDATE kafka_offset SET `offset` = ? "
        + "WHERE job = ? AND topic = ? AND `partition` = ? AND `offset` = ?");
  }

  /* The stored offsets of @topic's partitions under this job. */
  Map<Integer, Long> storedOffsets(String topic) throws SQLException {
    Map<Integer, Long> out = new HashMap<>();
    try (PreparedStatement st = conn.prepareStatement(
        "SELECT `partition`, `offset` FROM kafka_offset WHERE job = ? AND topic = ?")) {
      st.setString(1, job);
      st.setString(2, topic);
      try (ResultSet rs = st.executeQuery()) {
        while (rs.next())
          out.put(rs.getInt(1), rs.getLong(2));
      }
    }
    conn.commit();
    return out;
  }

  /* One batch: the counts and the offsets in one transaction. */
  void commit(List<Tuple2<LocalDateTime, Long>> counts, OffsetRange[] ranges) throws SQLException {
    try {
      for (Tuple2<LocalDateTime, Long> c : counts) {
        upsert.setString(1, c._1().format(MINUTE));
        upsert.setLong(2, c._2());
        upsert.setLong(3, c._2());
        upsert.addBatch();
      }
      if (!counts.isEmpty())
        upsert.executeBatch();
      for (OffsetRange r : ranges) {
        /* The seed's insert ignore: a partition seen for the first time
         * gets its row at the offset this batch started from. */
        insertOffset.setString(1, job);
        insertOffset.setString(2, r.topic());
        insertOffset.setInt(3, r.partition());
        insertOffset.setLong(4, r.fromOffset());
        insertOffset.addBatch();
      }
      insertOffset.executeBatch();
      for (OffsetRange r : ranges) {
        fence.setLong(1, r.untilOffset());
        fence.setString(2, job);
        fence.setString(3, r.topic());
        fence.setInt(4, r.partition());
        fence.setLong(5, r.fromOffset());
        int n = fence.executeUpdate();
        if (n != 1)
          throw new FenceMissed(String.format("kafka_offset of job %s, topic %s, partition %d is "
              + "no longer at %d (another writer moved it): batch rolled back", job, r.topic(),
              r.partition(), r.fromOffset()));
      }
      conn.commit();
    } catch (SQLException | RuntimeException e) {
      try {
        conn.rollback();
      } catch (SQLException r) {
        e.addSuppressed(r);
      }
      throw e;
    }
  }

  @Override
  public void close() throws SQLException {
    conn.close();
  }
}
