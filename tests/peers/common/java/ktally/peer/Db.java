/* Db.java - what every JVM peer needs of MySQL before its own job starts:
 * ktally's --db URI as JDBC wants it, and ktally's own tables.
 *
 * The peers (tests/peers/spark, spark-structured, flink) compile this file
 * beside their own sources (each pom adds tests/peers/common/java), so that
 * they read the same URI and create the same error_log and kafka_offset as
 * ktally does: the bench then checks every contender with one query. The
 * DDL comes from ktally's sql/common.sql and sql/counts.sql, which each
 * build copies into its jar under ktally-sql/. */
package ktally.peer;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.regex.Pattern;

public final class Db {
  private static final Pattern LINE_COMMENT = Pattern.compile("(?m)--.*$");

  public final String host, user, password, database;
  public final int port;

  /* A ktally --db URI, mysql://USER[:PASSWORD]@HOST[:PORT]/DATABASE;
   * IllegalArgumentException names what is wrong with it. */
  public Db(String uri) {
    java.net.URI u;
    try {
      u = new java.net.URI(uri);
    } catch (java.net.URISyntaxException e) {
      throw new IllegalArgumentException("--db: " + e.getMessage());
    }
    if (!"mysql".equals(u.getScheme()) || u.getHost() == null || u.getPath() == null
        || u.getPath().length() < 2)
      throw new IllegalArgumentException("--db: '" + uri + "' is not mysql://USER:PASSWORD@HOST:PORT/DATABASE");
    String info = u.getRawUserInfo() == null ? "root" : u.getRawUserInfo();
    int colon = info.indexOf(':');
    host = u.getHost();
    port = u.getPort() < 0 ? 3306 : u.getPort();
    user = decode(colon < 0 ? info : info.substring(0, colon));
    password = colon < 0 ? "" : decode(info.substring(colon + 1));
    database = u.getPath().substring(1);
  }

  private static String decode(String s) {
    return java.net.URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
  }

  public String jdbcUrl() {
    return "jdbc:mariadb://" + host + ":" + port + "/" + database;
  }

  public Connection connect() throws SQLException {
    return DriverManager.getConnection(jdbcUrl(), user, password);
  }

  /* error_log and kafka_offset as `ktally init-db` makes them (IF NOT
   * EXISTS: a database ktally or an earlier run made is kept). */
  public void createTables() throws SQLException, IOException {
    String ddl = resource("common.sql") + "\n" + resource("counts.sql");
    int made = 0;
    try (Connection c = connect(); Statement st = c.createStatement()) {
      for (String stmt : LINE_COMMENT.matcher(ddl).replaceAll("").split(";")) {
        String s = stmt.strip();
        if (s.startsWith("CREATE TABLE IF NOT EXISTS kafka_offset ")
            || s.startsWith("CREATE TABLE IF NOT EXISTS error_log ")) {
          st.execute(s);
          made++;
        }
      }
    }
    if (made != 2)
      throw new IOException("ktally's sql/common.sql and sql/counts.sql no longer hold the "
          + "CREATE TABLE of kafka_offset and error_log (found " + made + " of 2): rebuild the peer");
  }

  private static String resource(String name) throws IOException {
    try (InputStream in = Db.class.getResourceAsStream("/ktally-sql/" + name)) {
      if (in == null)
        throw new IOException("ktally-sql/" + name + " is not in the peer's jar: rebuild it");
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }
}
