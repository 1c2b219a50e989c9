/* StructuredPeer.java - the design's job on Spark Structured Streaming:
 * ERROR lines per minute from Kafka into MySQL's error_log, exactly once by
 * a fence on (query, batch id). A yardstick for ktally, not part of it.
 *
 * The job, as Spark's Structured Streaming guide teaches it: the Kafka
 * source (its offsets in Spark's checkpoint directory: offsets/N is
 * written before batch N runs, commits/N after its sink returned), and
 * foreachBatch as the sink. Per batch: each record value's lines
 * (Lines.java: ktally's format), the ERROR ones grouped by minute and
 * counted (groupBy().count(), collected to the driver), then ONE JDBC
 * transaction: lock the query's row of structured_commit; if it holds
 * this batch id or a later one, the batch was committed before (a restart
 * replays the batch whose commits/N was not written: a kill, or a COMMIT
 * whose answer was lost) and is skipped; else the per-minute upserts
 * (`log_count = log_count + ?`, as the seed) and the row moved to this
 * batch id, committed together. Spark's guide: foreachBatch alone is at
 * least once; the batch id is what makes it exactly once.
 *
 * The query is named --job (default spark-structured); its fence is keyed
 * by the query's id, which Spark keeps in the checkpoint: a new checkpoint
 * directory is a new query. local[2], checkpoint in --checkpoint DIR,
 * Trigger.ProcessingTime(--interval), or with --exit-when-idle
 * Trigger.AvailableNow (everything there at the start, then stop).
 *
 * It prints two lines per batch on stderr (`kt-structured-peer: begin
 * batch=N ...`, `kt-structured-peer: committed batch=N records=R errors=E
 * minutes=M compute_ms=... commit_ms=... since_start_s=S`, or `skipped
 * batch=N` for a replayed one); the rest is Spark's logging at WARN. */
package ktally.peer;

import java.lang.management.ManagementFactory;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.api.java.function.VoidFunction2;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.streaming.StreamingQuery;
import org.apache.spark.sql.streaming.Trigger;
import org.apache.spark.util.LongAccumulator;

public final class StructuredPeer {
  private static final String USAGE =
      "usage: kt-structured-peer --brokers HOST:PORT[,...] --topic TOPIC --db mysql://USER:PASSWORD@HOST:PORT/DB\n"
      + "                          --checkpoint DIR [--interval SECONDS] [--job NAME] [--master MASTER]\n"
      + "                          [--exit-when-idle]";
  /* The peer's own table (not ktally's): the last batch committed by each
   * query. */
  private static final String FENCE_TABLE = "CREATE TABLE IF NOT EXISTS structured_commit ("
      + "query_id CHAR(36) NOT NULL PRIMARY KEY, query_name VARCHAR(64) NOT NULL, "
      + "batch_id BIGINT NOT NULL) ENGINE=InnoDB";

  private StructuredPeer() {}

  static final class Options {
    String brokers, topic, checkpoint, job, master;
    long intervalMs;
    boolean exitWhenIdle;
    Db db;

    static Options parse(String[] argv) {
      Args a = new Args("kt-structured-peer", USAGE, argv, List.of("--exit-when-idle"), List.of(
          "--brokers", "--topic", "--db", "--checkpoint", "--job", "--master", "--interval"));
      a.require("--brokers", "--topic", "--db", "--checkpoint");
      Options o = new Options();
      o.brokers = a.get("--brokers", null);
      o.topic = a.get("--topic", null);
      o.checkpoint = a.get("--checkpoint", null);
      o.job = a.get("--job", "spark-structured");
      o.master = a.get("--master", "local[2]");
      o.intervalMs = a.millis("--interval", 1000);
      o.exitWhenIdle = a.flag("--exit-when-idle");
      if (!o.job.matches("[A-Za-z0-9_-]{1,64}"))
        a.fail("--job: 1 to 64 letters, digits, '-' or '_'");
      o.db = a.db();
      return o;
    }
  }

  private static double sinceStart() {
    return (System.currentTimeMillis() - ManagementFactory.getRuntimeMXBean().getStartTime()) / 1000.0;
  }

  public static void main(String[] args) {
    Options o = Options.parse(args);
    int rc = 1;
    try {
      rc = run(o, o.db);
    } catch (Throwable e) {
      System.err.println("kt-structured-peer: " + Args.failure(e, IllegalStateException.class));
    }
    /* Spark leaves non-daemon threads behind: end the JVM here. */
    System.exit(rc);
  }

  /* A record value -> the minute of each of its ERROR lines; counts the
   * records it saw (for the log line only: a retried task counts twice). */
  static final class ErrorMinutes implements FlatMapFunction<String, Long> {
    private static final long serialVersionUID = 1L;
    private final LongAccumulator records;

    ErrorMinutes(LongAccumulator records) {
      this.records = records;
    }

    @Override
    public Iterator<Long> call(String value) {
      records.add(1);
      List<Long> out = new ArrayList<>();
      for (Lines.Log log : Lines.parseValue(value))
        if (log.level.equals("ERROR"))
          out.add(Lines.epochMinute(log.time));
      return out.iterator();
    }
  }

  private static int run(Options o, Db db) throws Exception {
    db.createTables();
    try (Connection c = db.connect(); Statement st = c.createStatement()) {
      st.execute(FENCE_TABLE);
    }
    SparkSession spark = SparkSession.builder().appName("kt-structured-peer").master(o.master)
        /* As the DStream peer: no UI, the driver on loopback. */
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .getOrCreate();
    /* A batch's groupBy shuffles into spark.sql.shuffle.partitions, 200 by
     * default, and adaptive execution (which would coalesce them) is off
     * in streaming queries: 200 tasks a batch made every small batch take
     * 4-7 s on local[2] (0.4-1.8 s with 2, on the same records). The
     * tuning guide's first setting, to the cores: what the DStream peer's
     * reduceByKey gets by default (spark.default.parallelism). */
    if (!spark.conf().contains("spark.sql.shuffle.partitions"))
      spark.conf().set("spark.sql.shuffle.partitions", spark.sparkContext().defaultParallelism());
    Sink sink = new Sink(o, db, spark);

    Dataset<Row> kafka = spark.readStream().format("kafka")
        .option("kafka.bootstrap.servers", o.brokers)
        .option("subscribe", o.topic)
        /* The source's default is "latest": a first start would skip the
         * backlog that ktally and the other peers count. */
        .option("startingOffsets", "earliest")
        .load();
    StreamingQuery query = kafka.selectExpr("CAST(value AS STRING) AS value")
        .writeStream().queryName(o.job)
        .option("checkpointLocation", o.checkpoint)
        .trigger(o.exitWhenIdle ? Trigger.AvailableNow() : Trigger.ProcessingTime(o.intervalMs))
        .foreachBatch(sink)
        .start();
    System.err.printf("kt-structured-peer: started topic=%s interval_ms=%d job=%s query_id=%s "
        + "shuffle_partitions=%s since_start_s=%.3f%n", o.topic, o.intervalMs, o.job, query.id(),
        spark.conf().get("spark.sql.shuffle.partitions"), sinceStart());
    query.awaitTermination();
    if (!o.exitWhenIdle)
      return 1;  /* a ProcessingTime query ends only by failing, which throws */
    sink.close();
    System.err.printf("kt-structured-peer: idle, exiting since_start_s=%.3f%n", sinceStart());
    return 0;
  }

  /* foreachBatch: runs on the driver, one batch at a time, on one
   * connection. */
  static final class Sink implements VoidFunction2<Dataset<Row>, Long> {
    private static final long serialVersionUID = 1L;
    private final transient Options o;
    private final transient Db db;
    private final transient SparkSession spark;
    private transient Connection conn;

    Sink(Options o, Db db, SparkSession spark) {
      this.o = o;
      this.db = db;
      this.spark = spark;
    }

    void close() throws SQLException {
      if (conn != null)
        conn.close();
    }

    @Override
    public void call(Dataset<Row> batch, Long batchId) throws Exception {
      long t0 = System.nanoTime();
      System.err.printf("kt-structured-peer: begin batch=%d since_start_s=%.3f%n", batchId, sinceStart());
      String queryId = null;
      for (StreamingQuery q : spark.streams().active())
        if (o.job.equals(q.name()))
          queryId = q.id().toString();
      if (queryId == null)
        throw new IllegalStateException("query " + o.job + " is not among the active queries");
      LongAccumulator records = spark.sparkContext().longAccumulator("records");
      List<Row> counts = batch.select("value").as(Encoders.STRING())
          .flatMap(new ErrorMinutes(records), Encoders.LONG())
          .groupBy("value").count()
          .collectAsList();
      long t1 = System.nanoTime();
      boolean done = commit(queryId, batchId, counts);
      long t2 = System.nanoTime(), errors = 0;
      for (Row r : counts)
        errors += r.getLong(1);
      if (done)
        System.err.printf("kt-structured-peer: committed batch=%d records=%d errors=%d minutes=%d "
            + "compute_ms=%.1f commit_ms=%.1f since_start_s=%.3f%n", batchId, records.value(), errors,
            counts.size(), (t1 - t0) / 1e6, (t2 - t1) / 1e6, sinceStart());
      else
        System.err.printf("kt-structured-peer: skipped batch=%d (committed before) since_start_s=%.3f%n",
            batchId, sinceStart());
    }

    /* The batch's counts and the fence in one transaction; false when the
     * fence says this batch was committed before (nothing written). */
    private boolean commit(String queryId, long batchId, List<Row> counts) throws SQLException {
      if (conn == null || !conn.isValid(5)) {
        conn = db.connect();
        conn.setAutoCommit(false);
      }
      try {
        try (PreparedStatement st = conn.prepareStatement(
            "SELECT batch_id FROM structured_commit WHERE query_id = ? FOR UPDATE")) {
          st.setString(1, queryId);
          try (ResultSet rs = st.executeQuery()) {
            if (rs.next() && rs.getLong(1) >= batchId) {
              conn.rollback();
              return false;
            }
          }
        }
        try (PreparedStatement up = conn.prepareStatement("INSERT INTO error_log (log_time, log_count) "
            + "VALUES (?, ?) ON DUPLICATE KEY UPDATE log_count = log_count + VALUES(log_count)")) {
          for (Row r : counts) {
            up.setString(1, Lines.minuteText(r.getLong(0)));
            up.setLong(2, r.getLong(1));
            up.addBatch();
          }
          if (!counts.isEmpty())
            up.executeBatch();
        }
        try (PreparedStatement f = conn.prepareStatement("INSERT INTO structured_commit "
            + "(query_id, query_name, batch_id) VALUES (?, ?, ?) "
            + "ON DUPLICATE KEY UPDATE batch_id = VALUES(batch_id)")) {
          f.setString(1, queryId);
          f.setString(2, o.job);
          f.setLong(3, batchId);
          f.executeUpdate();
        }
        conn.commit();
        return true;
      } catch (SQLException | RuntimeException e) {
        try {
          conn.rollback();
        } catch (SQLException r) {
          e.addSuppressed(r);
        }
        throw e;
      }
    }
  }
}
