/* Lines.java - the seed's parseLog: one record value -> its log lines,
 * each a (time, level) or nothing.
 *
 * Runs in the peers' tasks (Spark's, Flink's), so it is static and keeps no
 * state. It reads the line format ktally reads by default (src/parse.h),
 * not the seed's looser one, so that every program counts the same lines
 * of kt-gen's data:
 *   - a value holds one or more lines separated by "\n"; one trailing "\r"
 *     is dropped and empty lines are not lines;
 *   - a line is "YYYY-MM-DD HH:MM:SS LEVEL" from its first byte, LEVEL
 *     letters only, then a space or the end;
 *   - the date must exist, the year be 1000 or later (DATETIME's range),
 *     and second 60 (a leap second) counts in its minute.
 * The seed's pattern `(.{19}) ([A-Z]+).*` with a SMART java.time resolver
 * would count "2017-02-30 ... ERROR" in February's last day and "24:00:00"
 * as the next midnight: kt-gen writes such lines to catch exactly that. */
package ktally.peer;

import java.io.Serializable;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.time.format.ResolverStyle;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

final class Lines {
  /* The seed's case class Log. */
  static final class Log implements Serializable {
    private static final long serialVersionUID = 1L;
    final LocalDateTime time;
    final String level;

    Log(LocalDateTime time, String level) {
      this.time = time;
      this.level = level;
    }
  }

  private static final Pattern LINE =
      Pattern.compile("([0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}) ([A-Za-z]+)(?: |\\z)");
  /* STRICT: a date or time that does not exist is refused, not moved. */
  private static final DateTimeFormatter TIME =
      DateTimeFormatter.ofPattern("uuuu-MM-dd HH:mm:ss").withResolverStyle(ResolverStyle.STRICT);

  /* error_log's log_time: a minute as MySQL reads a DATETIME. */
  private static final DateTimeFormatter MINUTE = DateTimeFormatter.ofPattern("uuuu-MM-dd HH:mm:00");

  private Lines() {}

  /* Minutes since the epoch of @time's minute: a key as small as a long
   * (what the Flink peer keys its state by and ships between its tasks). */
  static long epochMinute(LocalDateTime time) {
    return Math.floorDiv(time.toEpochSecond(ZoneOffset.UTC), 60);
  }

  /* The log_time of @minute (minutes since the epoch). */
  static String minuteText(long minute) {
    return LocalDateTime.ofEpochSecond(minute * 60, 0, ZoneOffset.UTC).format(MINUTE);
  }

  /* The well-formed lines of @value (null: a tombstone, no lines). */
  static List<Log> parseValue(String value) {
    List<Log> logs = new ArrayList<>();
    if (value == null)
      return logs;
    int start = 0, len = value.length();
    while (start < len) {
      int nl = value.indexOf('\n', start);
      int end = nl < 0 ? len : nl;
      int stop = end > start && value.charAt(end - 1) == '\r' ? end - 1 : end;
      if (stop > start) {
        Log log = parseLine(value.substring(start, stop));
        if (log != null)
          logs.add(log);
      }
      start = end + 1;
    }
    return logs;
  }

  /* One line, or null when it is malformed. */
  static Log parseLine(String line) {
    Matcher m = LINE.matcher(line);
    if (!m.lookingAt())
      return null;
    String stamp = m.group(1);
    boolean leap = stamp.endsWith(":60");
    if (leap)
      stamp = stamp.substring(0, 17) + "59";
    LocalDateTime time;
    try {
      time = LocalDateTime.parse(stamp, TIME);
    } catch (DateTimeParseException e) {
      return null;
    }
    if (time.getYear() < 1000)
      return null;
    return new Log(time, m.group(2));
  }
}
