/* FlinkPeer.java - the design's job on Apache Flink: ERROR lines per
 * minute from Kafka into MySQL's error_log, exactly once through the JDBC
 * connector's XA sink (or at least once, --sink at-least-once). A
 * yardstick for ktally, not part of it.
 *
 * The job, as Flink's documentation teaches it (DataStream API):
 *
 *   KafkaSource (offsets in Flink's checkpoints; committed to a Kafka group
 *   of this start's own when a checkpoint completes, a progress marker)
 *   -> flatMap: each record value's lines (Lines.java: ktally's format),
 *      the ERROR ones as their minute (minutes since the epoch)
 *   -> keyBy(minute) -> processing-time tumbling windows of --interval,
 *      counted (an AggregateFunction), and added to the minute's running
 *      total in keyed state (ProcessWindowFunction's globalState)
 *   -> JdbcSink: `INSERT ... ON DUPLICATE KEY UPDATE log_count =
 *      VALUES(log_count)`, the total, not an increment. Exactly once: one
 *      XA transaction per checkpoint and sink subtask, prepared at the
 *      checkpoint's barrier and committed when the checkpoint completes
 *      (withTransactionPerConnection(true): MariaDB allows one XA
 *      transaction per connection; maxRetries 0, as the connector
 *      requires). At least once: the connector's plain sink, flushed at
 *      every checkpoint; the upsert of a total is idempotent, which is
 *      what the connector's documentation offers instead of XA.
 *
 * The window is the job's batch: it turns ~30% of the lines into one row a
 * minute per interval, where a reduce without it would upsert once per
 * ERROR line. Checkpoints every --interval into --checkpoints DIR (the
 * default hashmap state backend), retained when the job ends; a start
 * resumes from the newest complete one there (execution.state-recovery.
 * path, what `flink run -s` sets). One JVM: a MiniCluster, parallelism =
 * the machine's cores (Flink's local default).
 *
 * It prints, on stderr, one line when the job is submitted and one per
 * completed checkpoint and sink subtask (`kt-flink-peer: committed
 * checkpoint=N subtask=S rows=R since_start_s=T`: R rows went into that
 * checkpoint's transaction), for the bench and the tests; the rest is
 * Flink's logging at WARN. --exit-when-idle: once the topic is read to the
 * end offsets it had at the start and every window since is committed, the
 * job is cancelled and the JVM exits 0 (Progress, below). */
package ktally.peer;

import java.io.File;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import javax.sql.XADataSource;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.api.common.functions.FlatMapFunction;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.serialization.SimpleStringSchema;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.configuration.ExternalizedCheckpointRetention;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.connector.jdbc.JdbcConnectionOptions;
import org.apache.flink.connector.jdbc.JdbcExactlyOnceOptions;
import org.apache.flink.connector.jdbc.JdbcExecutionOptions;
import org.apache.flink.connector.jdbc.JdbcStatementBuilder;
import org.apache.flink.connector.jdbc.core.datastream.sink.JdbcSink;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.TumblingProcessingTimeWindows;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.mariadb.jdbc.MariaDbDataSource;

public final class FlinkPeer {
  private static final String USAGE =
      "usage: kt-flink-peer --brokers HOST:PORT[,...] --topic TOPIC --db mysql://USER:PASSWORD@HOST:PORT/DB\n"
      + "                     --checkpoints DIR [--interval SECONDS] [--job NAME]\n"
      + "                     [--sink exactly-once|at-least-once] [--parallelism N] [--exit-when-idle]\n"
      + "                     [--no-xa-cleanup]";
  private static final String UPSERT = "INSERT INTO error_log (log_time, log_count) VALUES (?, ?) "
      + "ON DUPLICATE KEY UPDATE log_count = VALUES(log_count)";

  private FlinkPeer() {}

  static final class Options {
    String brokers, topic, checkpoints, job;
    boolean exactlyOnce, exitWhenIdle, xaCleanup;
    long intervalMs;
    int parallelism;
    Db db;

    static Options parse(String[] argv) {
      Args a = new Args("kt-flink-peer", USAGE, argv, List.of("--exit-when-idle", "--no-xa-cleanup"),
          List.of("--brokers", "--topic", "--db", "--job", "--checkpoints", "--interval", "--parallelism",
              "--sink"));
      a.require("--brokers", "--topic", "--db", "--checkpoints");
      Options o = new Options();
      o.brokers = a.get("--brokers", null);
      o.topic = a.get("--topic", null);
      o.checkpoints = a.get("--checkpoints", null);
      o.job = a.get("--job", "flink");
      o.intervalMs = a.millis("--interval", 1000);
      o.parallelism = a.positive("--parallelism", Runtime.getRuntime().availableProcessors());
      o.exitWhenIdle = a.flag("--exit-when-idle");
      o.xaCleanup = !a.flag("--no-xa-cleanup");
      String sink = a.get("--sink", "exactly-once");
      if (!sink.equals("exactly-once") && !sink.equals("at-least-once"))
        a.fail("--sink: 'exactly-once' or 'at-least-once', not '" + sink + "'");
      o.exactlyOnce = sink.equals("exactly-once");
      if (o.job.isEmpty() || o.job.length() > 64)
        a.fail("--job: 1 to 64 characters");
      o.db = a.db();
      return o;
    }
  }

  static double sinceStart() {
    return (System.currentTimeMillis() - ManagementFactory.getRuntimeMXBean().getStartTime()) / 1000.0;
  }

  public static void main(String[] args) {
    Options o = Options.parse(args);
    int rc = 1;
    try {
      rc = run(o, o.db);
    } catch (Throwable e) {
      System.err.println("kt-flink-peer: " + Args.failure(e, IllegalStateException.class));
    }
    /* The MiniCluster leaves non-daemon threads behind: end the JVM here. */
    System.exit(rc);
  }

  /* The newest complete checkpoint under @dir (DIR/<job id>/chk-N/_metadata,
   * whichever job wrote it: a restarted job has a new id), or null. A
   * chk-N without _metadata is one the kill interrupted. */
  static String latestCheckpoint(File dir) {
    File best = null;
    File[] jobs = dir.listFiles(File::isDirectory);
    for (File job : jobs == null ? new File[0] : jobs) {
      File[] chks = job.listFiles(f -> f.getName().startsWith("chk-"));
      for (File chk : chks == null ? new File[0] : chks) {
        File meta = new File(chk, "_metadata");
        if (meta.isFile() && (best == null || meta.lastModified() > best.lastModified()))
          best = meta;
      }
    }
    return best == null ? null : best.getParentFile().getAbsolutePath();
  }

  private static int run(Options o, Db db) throws Exception {
    db.createTables();
    File dir = new File(o.checkpoints).getAbsoluteFile();
    if (!dir.isDirectory() && !dir.mkdirs())
      throw new IllegalStateException("cannot create the checkpoint directory " + dir);
    String restore = latestCheckpoint(dir);
    int rolledBack = o.xaCleanup && o.exactlyOnce ? rollBackOrphans(db, dir, restore) : 0;

    Configuration conf = new Configuration();
    conf.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, dir.toURI().toString());
    /* Kept when the job is cancelled (--exit-when-idle), as after a kill. */
    conf.set(CheckpointingOptions.EXTERNALIZED_CHECKPOINT_RETENTION,
        ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION);
    conf.set(CoreOptions.DEFAULT_PARALLELISM, o.parallelism);
    if (restore != null)
      conf.set(StateRecoveryOptions.SAVEPOINT_PATH, restore);
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env.enableCheckpointing(o.intervalMs);

    /* Flink keeps the offsets in its checkpoints; what it commits to the
     * group is a progress marker, which --exit-when-idle reads. A group of
     * this start's own, so that no earlier run's marker can look like
     * progress (the first checkpoint's commit may land after a read). */
    String group = "kt-flink-peer-" + o.job + "-" + java.util.UUID.randomUUID();
    KafkaSource<String> source = KafkaSource.<String>builder()
        .setBootstrapServers(o.brokers)
        .setTopics(o.topic)
        .setGroupId(group)
        .setValueOnlyDeserializer(new SimpleStringSchema())
        .build();
    DataStream<Tuple2<Long, Long>> totals = env
        .fromSource(source, WatermarkStrategy.noWatermarks(), "kafka").uid("kafka")
        .flatMap(new ErrorMinutes()).uid("parse").name("parse")
        .keyBy(minute -> minute)
        .window(TumblingProcessingTimeWindows.of(Duration.ofMillis(o.intervalMs)))
        .aggregate(new Count(), new Totals()).uid("count").name("count")
        .map(new CommitLog()).uid("commit-log").name("commit-log");

    JdbcStatementBuilder<Tuple2<Long, Long>> row = (ps, t) -> {
      ps.setString(1, Lines.minuteText(t.f0));
      ps.setLong(2, t.f1);
    };
    String url = db.jdbcUrl(), user = db.user, password = db.password;
    if (o.exactlyOnce) {
      totals.sinkTo(JdbcSink.<Tuple2<Long, Long>>builder()
          .withQueryStatement(UPSERT, row)
          .withExecutionOptions(JdbcExecutionOptions.builder().withMaxRetries(0).build())
          .buildExactlyOnce(
              JdbcExactlyOnceOptions.builder().withTransactionPerConnection(true).build(),
              () -> xaDataSource(url, user, password)))
          .uid("mysql").name("mysql");
    } else {
      totals.sinkTo(JdbcSink.<Tuple2<Long, Long>>builder()
          .withQueryStatement(UPSERT, row)
          .buildAtLeastOnce(new JdbcConnectionOptions.JdbcConnectionOptionsBuilder()
              .withUrl(url).withDriverName("org.mariadb.jdbc.Driver")
              .withUsername(user).withPassword(password).build()))
          .uid("mysql").name("mysql");
    }

    Progress.reset(o.parallelism);
    Map<TopicPartition, Long> end = o.exitWhenIdle ? endOffsets(o) : null;
    JobClient client = env.executeAsync("kt-flink-peer " + o.job);
    System.err.printf("kt-flink-peer: started topic=%s parallelism=%d interval_ms=%d sink=%s job=%s "
        + "restored_from=%s xa_rolled_back=%d since_start_s=%.3f%n", o.topic, o.parallelism, o.intervalMs,
        o.exactlyOnce ? "exactly-once" : "at-least-once", o.job, restore == null ? "-" : restore,
        rolledBack, sinceStart());
    if (!o.exitWhenIdle) {
      client.getJobExecutionResult().get();
      return 1;  /* an unbounded job never ends but by failing */
    }
    return waitIdle(o, client, group, end);
  }

  /* The restart's cleanup of the XA sink (what an operator does by hand
   * otherwise): rolls back the sink's prepared transactions that the
   * checkpoint @restore does not know, and says how many. Such a
   * transaction was prepared at a barrier whose checkpoint never completed
   * (a kill -9 between the two); its rows will be written again from the
   * replayed records, and until it ends it holds their row locks. The
   * connector's own recovery means to roll it back but cannot on MariaDB:
   * it sends XA END before XA ROLLBACK, which MariaDB refuses for a
   * transaction prepared on another connection (XAER_RMFAIL), and its
   * XA RECOVER scan compares the driver's Xid objects by class.
   *
   * The connector's xid (format 202): the job id (16 bytes) and the
   * subtask (4) as the global id, the subtask count (4) and the checkpoint
   * id (8) as the branch, each padded with zeros to its serializer's
   * buffer (34 and 13 bytes here). A transaction is named after the checkpoint
   * before it and prepared at the next one's barrier: those named after
   * checkpoint N or later are not in chk-N. Only the jobs that wrote to
   * @dir are considered, never another program's transactions. */
  static int rollBackOrphans(Db db, File dir, String restore) throws java.sql.SQLException {
    java.util.Set<String> jobs = new java.util.HashSet<>();
    File[] subdirs = dir.listFiles(File::isDirectory);
    for (File f : subdirs == null ? new File[0] : subdirs)
      jobs.add(f.getName());
    long from = restore == null ? 0 : Long.parseLong(new File(restore).getName().substring(4));
    List<String> orphans = new java.util.ArrayList<>();
    try (java.sql.Connection c = db.connect(); java.sql.Statement st = c.createStatement()) {
      try (java.sql.ResultSet rs = st.executeQuery("XA RECOVER")) {
        while (rs.next()) {
          byte[] data = rs.getBytes("data");
          int g = rs.getInt("gtrid_length"), q = rs.getInt("bqual_length");
          if (rs.getInt("formatID") != 202 || g < 20 || q < 12 || data.length != g + q)
            continue;
          String job = hex(data, 0, 16);
          long checkpoint = java.nio.ByteBuffer.wrap(data).getLong(g + 4);
          if (jobs.contains(job) && checkpoint >= from)
            orphans.add("XA ROLLBACK X'" + hex(data, 0, g) + "',X'" + hex(data, g, q) + "',202");
        }
      }
      for (String sql : orphans)
        st.execute(sql);
    }
    return orphans.size();
  }

  private static String hex(byte[] b, int off, int len) {
    StringBuilder sb = new StringBuilder();
    for (int i = off; i < off + len; i++)
      sb.append(String.format("%02x", b[i]));
    return sb.toString();
  }

  private static XADataSource xaDataSource(String url, String user, String password) {
    try {
      MariaDbDataSource ds = new MariaDbDataSource(url);
      ds.setUser(user);
      ds.setPassword(password);
      return ds;
    } catch (java.sql.SQLException e) {
      throw new IllegalStateException("cannot make an XA data source for " + url + ": " + e.getMessage());
    }
  }

  private static Properties adminProps(Options o) {
    Properties p = new Properties();
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, o.brokers);
    return p;
  }

  /* The topic's end offsets now: what --exit-when-idle drains to. */
  private static Map<TopicPartition, Long> endOffsets(Options o) throws Exception {
    try (Admin admin = Admin.create(adminProps(o))) {
      List<TopicPartition> parts = admin.describeTopics(List.of(o.topic)).allTopicNames()
          .get(30, TimeUnit.SECONDS).get(o.topic).partitions().stream()
          .map(p -> new TopicPartition(o.topic, p.partition())).collect(Collectors.toList());
      Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
      for (TopicPartition tp : parts)
        latest.put(tp, OffsetSpec.latest());
      Map<TopicPartition, Long> out = new HashMap<>();
      admin.listOffsets(latest).all().get(30, TimeUnit.SECONDS)
          .forEach((tp, info) -> out.put(tp, info.offset()));
      return out;
    }
  }

  /* --exit-when-idle: the source's offsets that Kafka holds for the group
   * (Flink commits them there when a checkpoint completes) reach @end;
   * then, once the windows open at that moment have fired (an interval,
   * plus slack), a checkpoint whose barrier passed every sink subtask
   * after its last row must complete: its commit holds everything. */
  private static int waitIdle(Options o, JobClient client, String group,
                              Map<TopicPartition, Long> end) throws Exception {
    long caughtUp = 0;
    try (Admin admin = Admin.create(adminProps(o))) {
      while (true) {
        JobStatus st = client.getJobStatus().get();
        if (st.isGloballyTerminalState()) {
          client.getJobExecutionResult().get();
          throw new IllegalStateException("the job ended (" + st + ") before it was idle");
        }
        if (caughtUp == 0) {
          Map<TopicPartition, OffsetAndMetadata> done = admin.listConsumerGroupOffsets(group)
              .partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
          boolean all = true;
          for (Map.Entry<TopicPartition, Long> e : end.entrySet()) {
            OffsetAndMetadata c = done.get(e.getKey());
            all &= e.getValue() == 0 || (c != null && c.offset() >= e.getValue());
          }
          if (all) {
            caughtUp = System.nanoTime();
            System.err.printf("kt-flink-peer: read to the end offsets since_start_s=%.3f%n", sinceStart());
          }
        } else if (Progress.committedSince(caughtUp + (o.intervalMs + 500) * 1_000_000L)) {
          client.cancel().get(60, TimeUnit.SECONDS);
          System.err.printf("kt-flink-peer: idle, exiting since_start_s=%.3f%n", sinceStart());
          return 0;
        }
        Thread.sleep(100);
      }
    }
  }

  /* A record value -> the minute of each of its ERROR lines. */
  static final class ErrorMinutes implements FlatMapFunction<String, Long> {
    private static final long serialVersionUID = 1L;

    @Override
    public void flatMap(String value, Collector<Long> out) {
      for (Lines.Log log : Lines.parseValue(value))
        if (log.level.equals("ERROR"))
          out.collect(Lines.epochMinute(log.time));
    }
  }

  /* ERROR lines of one minute in one window. */
  static final class Count implements AggregateFunction<Long, Long, Long> {
    private static final long serialVersionUID = 1L;

    @Override
    public Long createAccumulator() {
      return 0L;
    }

    @Override
    public Long add(Long minute, Long n) {
      return n + 1;
    }

    @Override
    public Long getResult(Long n) {
      return n;
    }

    @Override
    public Long merge(Long a, Long b) {
      return a + b;
    }
  }

  /* A window's count added to the minute's total (keyed state that lives
   * across windows): emits (minute, total), the row error_log must hold. */
  static final class Totals extends ProcessWindowFunction<Long, Tuple2<Long, Long>, Long, TimeWindow> {
    private static final long serialVersionUID = 1L;
    private static final ValueStateDescriptor<Long> TOTAL = new ValueStateDescriptor<>("total", Long.class);

    @Override
    public void process(Long minute, Context ctx, Iterable<Long> counts, Collector<Tuple2<Long, Long>> out)
        throws Exception {
      ValueState<Long> total = ctx.globalState().getState(TOTAL);
      long sum = total.value() == null ? 0 : total.value();
      for (Long n : counts)
        sum += n;
      total.update(sum);
      out.collect(Tuple2.of(minute, sum));
    }
  }

  /* Passes rows on to the sink, chained with it in one task; counts the
   * rows of each checkpoint's transaction and says when it committed.
   * Flink notifies a task's operators from the sink end of the chain, so
   * this runs after the sink's committer has committed. */
  static final class CommitLog extends RichMapFunction<Tuple2<Long, Long>, Tuple2<Long, Long>>
      implements CheckpointedFunction, CheckpointListener {
    private static final long serialVersionUID = 1L;
    private transient int subtask;
    private transient long rows;
    private transient TreeMap<Long, long[]> pending;  /* checkpoint -> {rows, barrier ns} */

    @Override
    public void initializeState(FunctionInitializationContext ctx) {
      pending = new TreeMap<>();
    }

    @Override
    public void open(org.apache.flink.api.common.functions.OpenContext ctx) {
      subtask = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
    }

    @Override
    public Tuple2<Long, Long> map(Tuple2<Long, Long> row) {
      rows++;
      Progress.row(subtask);
      return row;
    }

    @Override
    public void snapshotState(FunctionSnapshotContext ctx) {
      pending.put(ctx.getCheckpointId(), new long[] {rows, System.nanoTime()});
      rows = 0;
    }

    @Override
    public void notifyCheckpointComplete(long id) {
      /* A notification may stand for earlier checkpoints too (Flink can
       * skip some): the committer commits all up to @id. */
      long n = 0, barrier = -1;
      while (!pending.isEmpty() && pending.firstKey() <= id) {
        long[] p = pending.pollFirstEntry().getValue();
        n += p[0];
        barrier = p[1];
      }
      if (barrier < 0)
        return;
      System.err.printf("kt-flink-peer: committed checkpoint=%d subtask=%d rows=%d since_start_s=%.3f%n",
          id, subtask, n, sinceStart());
      Progress.committed(subtask, barrier);
    }
  }

  /* What the sink subtasks have committed, for --exit-when-idle: the
   * MiniCluster runs every task in this JVM, so the main thread reads it. */
  static final class Progress {
    private static long[] lastRow = new long[0], lastBarrier = new long[0];

    static synchronized void reset(int parallelism) {
      lastRow = new long[parallelism];
      lastBarrier = new long[parallelism];
      Arrays.fill(lastRow, Long.MIN_VALUE);
      Arrays.fill(lastBarrier, Long.MIN_VALUE);
    }

    static synchronized void row(int subtask) {
      lastRow[subtask] = System.nanoTime();
    }

    static synchronized void committed(int subtask, long barrier) {
      lastBarrier[subtask] = barrier;
    }

    /* Every sink subtask has committed a checkpoint whose barrier came
     * after @since and after its last row. */
    static synchronized boolean committedSince(long since) {
      for (int i = 0; i < lastBarrier.length; i++)
        if (lastBarrier[i] == Long.MIN_VALUE || lastBarrier[i] - since < 0
            || (lastRow[i] != Long.MIN_VALUE && lastBarrier[i] - lastRow[i] <= 0))
          return false;
      return true;
    }
  }
}
