/* ExactlyOnce.java - the design's Spark Streaming program: ERROR lines per
 * minute from Kafka into MySQL, exactly once. ktally's yardstick.
 *
 * What the seed describes, step by step: read the offsets stored in
 * kafka_offset, create the direct stream with Assign from them, and per
 * batch map each record to its value, parse it into logs, keep the ERROR
 * ones, key them by their minute, reduceByKey, collect to the driver, and
 * write the counts and every partition's fenced offset update in ONE
 * transaction (Store.commit). Written from the seed's design, in Java
 * against Spark 4's Java API; the differences from the seed are the line
 * format (Lines.java: ktally's), the tables (ktally's shapes: a job column
 * in kafka_offset), arguments instead of constants, partitions without a
 * stored offset starting at the log's start (the seed reads nothing from
 * them), and --exit-when-idle for the bench.
 *
 * It prints two lines per batch on stderr, when it begins and when it has
 * committed, figures as key=value, for the bench and the tests; everything
 * else on stderr is Spark's. */
package ktally.peer;

import java.lang.management.ManagementFactory;
import java.time.LocalDateTime;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.spark.SparkConf;
import org.apache.spark.streaming.Durations;
import org.apache.spark.streaming.api.java.JavaInputDStream;
import org.apache.spark.streaming.api.java.JavaStreamingContext;
import org.apache.spark.streaming.kafka010.ConsumerStrategies;
import org.apache.spark.streaming.kafka010.HasOffsetRanges;
import org.apache.spark.streaming.kafka010.KafkaUtils;
import org.apache.spark.streaming.kafka010.LocationStrategies;
import org.apache.spark.streaming.kafka010.OffsetRange;
import scala.Tuple2;

public final class ExactlyOnce {
  private static final String USAGE =
      "usage: kt-spark-peer --brokers HOST:PORT[,...] --topic TOPIC --db mysql://USER:PASSWORD@HOST:PORT/DB\n"
      + "                     [--partitions N] [--interval SECONDS] [--job NAME] [--master MASTER]\n"
      + "                     [--exit-when-idle]";

  private ExactlyOnce() {}

  static final class Options {
    String brokers, topic, job, master;
    int partitions;            /* -1: the topic's, from its metadata */
    long intervalMs;           /* the seed's Seconds(5) */
    boolean exitWhenIdle;
    Db db;

    static Options parse(String[] argv) {
      Args a = new Args("kt-spark-peer", USAGE, argv, List.of("--exit-when-idle"), List.of("--brokers",
          "--topic", "--db", "--job", "--master", "--partitions", "--interval"));
      a.require("--brokers", "--topic", "--db");
      Options o = new Options();
      o.brokers = a.get("--brokers", null);
      o.topic = a.get("--topic", null);
      o.job = a.get("--job", "spark");
      o.master = a.get("--master", "local[2]");
      o.partitions = a.positive("--partitions", -1);
      o.intervalMs = a.millis("--interval", 5000);
      o.exitWhenIdle = a.flag("--exit-when-idle");
      if (o.job.isEmpty() || o.job.length() > 64)
        a.fail("--job: 1 to 64 characters");
      o.db = a.db();
      return o;
    }
  }

  private static Map<String, Object> kafkaParams(Options o) {
    Map<String, Object> p = new HashMap<>();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, o.brokers);
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
    p.put(ConsumerConfig.GROUP_ID_CONFIG, "kt-spark-peer-" + o.job);
    /* As the seed: the offsets live in MySQL only, and an offset Kafka no
     * longer has is an error, never a silent jump. */
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "none");
    return p;
  }

  /* Where each partition starts: its stored offset, or (never stored) the
   * log's start, which the first batch's insert ignore then records. */
  private static Map<TopicPartition, Long> fromOffsets(Options o, Store store) throws Exception {
    Map<Integer, Long> stored = store.storedOffsets(o.topic);
    try (KafkaConsumer<String, String> c = new KafkaConsumer<>(kafkaParams(o))) {
      int n = o.partitions;
      if (n < 0) {
        List<PartitionInfo> info = c.partitionsFor(o.topic, java.time.Duration.ofSeconds(30));
        if (info == null || info.isEmpty())
          throw new IllegalStateException("topic " + o.topic + " does not exist or has no partitions");
        n = info.size();
      }
      List<TopicPartition> parts = new ArrayList<>();
      for (int i = 0; i < n; i++)
        parts.add(new TopicPartition(o.topic, i));
      Map<TopicPartition, Long> begin = c.beginningOffsets(parts, java.time.Duration.ofSeconds(30));
      Map<TopicPartition, Long> out = new HashMap<>();
      for (TopicPartition tp : parts)
        out.put(tp, stored.containsKey(tp.partition()) ? stored.get(tp.partition()) : begin.get(tp));
      return out;
    } catch (org.apache.kafka.common.KafkaException e) {
      /* One line that names what and where; no cause chained, so that main
       * prints this message rather than Kafka's bare one. */
      throw new IllegalStateException("cannot read the partitions of topic " + o.topic + " from "
          + o.brokers + ": " + e.getMessage());
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
      /* Our own messages as they are; anything else with its class name. */
      System.err.println("kt-spark-peer: " + Args.failure(e, Store.FenceMissed.class,
          IllegalStateException.class));
    }
    /* Spark leaves non-daemon threads behind: end the JVM here. */
    System.exit(rc);
  }

  private static int run(Options o, Db db) throws Exception {
    db.createTables();
    Store store = new Store(db, o.job);
    Map<TopicPartition, Long> from = fromOffsets(o, store);
    int partitions = from.size();

    SparkConf conf = new SparkConf().setAppName("ExactlyOnce").setIfMissing("spark.master", o.master)
        /* The UI would cost a web server and threads the yardstick does not need. */
        .setIfMissing("spark.ui.enabled", "false")
        .setIfMissing("spark.driver.host", "127.0.0.1")
        .setIfMissing("spark.driver.bindAddress", "127.0.0.1")
        /* One cached Kafka consumer per partition: the default of 64 would
         * close and reopen consumers every batch at 128+ partitions. */
        .setIfMissing("spark.streaming.kafka.consumer.cache.maxCapacity",
                      Integer.toString(Math.max(64, partitions)));
    JavaStreamingContext ssc = new JavaStreamingContext(conf, Durations.milliseconds(o.intervalMs));
    CountDownLatch idle = new CountDownLatch(1);
    long[] batch = {0};

    JavaInputDStream<ConsumerRecord<String, String>> messages = KafkaUtils.createDirectStream(ssc,
        LocationStrategies.PreferConsistent(),
        ConsumerStrategies.<String, String>Assign(from.keySet(), kafkaParams(o), from));

    messages.foreachRDD(rdd -> {
      OffsetRange[] ranges = ((HasOffsetRanges) rdd.rdd()).offsetRanges();
      long t0 = System.nanoTime(), records = 0, errors = 0;
      for (OffsetRange r : ranges)
        records += r.count();
      batch[0]++;
      /* Tests kill the driver -9 between this line and the next. */
      System.err.printf("kt-spark-peer: begin batch=%d records=%d since_start_s=%.3f%n", batch[0],
          records, sinceStart());
      /* The seed's processLogs, then collect(): every count comes back to
       * the driver, which writes them all in one transaction. */
      List<Tuple2<LocalDateTime, Long>> result = rdd.map(ConsumerRecord::value)
          .flatMap(v -> Lines.parseValue(v).iterator())
          .filter(log -> log.level.equals("ERROR"))
          .mapToPair(log -> new Tuple2<>(log.time.truncatedTo(ChronoUnit.MINUTES), 1L))
          .reduceByKey(Long::sum)
          .collect();
      long t1 = System.nanoTime();
      store.commit(result, ranges);
      long t2 = System.nanoTime();
      for (Tuple2<LocalDateTime, Long> c : result)
        errors += c._2();
      System.err.printf("kt-spark-peer: committed batch=%d records=%d errors=%d minutes=%d "
          + "partitions=%d compute_ms=%.1f commit_ms=%.1f since_start_s=%.3f%n", batch[0], records,
          errors, result.size(), ranges.length, (t1 - t0) / 1e6, (t2 - t1) / 1e6, sinceStart());
      if (o.exitWhenIdle && records == 0)
        idle.countDown();
    });

    ssc.start();
    System.err.printf("kt-spark-peer: started topic=%s partitions=%d interval_ms=%d job=%s "
        + "since_start_s=%.3f%n", o.topic, partitions, o.intervalMs, o.job, sinceStart());
    /* Wakes up to see whether an idle batch asked to stop; a failed batch
     * makes awaitTerminationOrTimeout throw it. */
    while (!ssc.awaitTerminationOrTimeout(100)) {
      if (idle.getCount() == 0) {
        ssc.stop(true, false);
        store.close();
        System.err.println("kt-spark-peer: idle, exiting");
        return 0;
      }
    }
    return 1;
  }
}
