/* Args.java - a JVM peer's command line: `--name VALUE`, `--name=VALUE`
 * and flags, with the checks every peer needs. A bad command line prints
 * `PROG: what is wrong` and the usage on stderr and exits 2, as ktally
 * does; --help prints the usage and exits 0. */
package ktally.peer;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

final class Args {
  private final String prog, usage;
  private final Map<String, String> values = new HashMap<>();
  private final Set<String> flags = new HashSet<>();

  /* Parses @argv: @flagNames take no value, @valueNames one. */
  Args(String prog, String usage, String[] argv, List<String> flagNames, List<String> valueNames) {
    this.prog = prog;
    this.usage = usage;
    for (int i = 0; i < argv.length; i++) {
      String a = argv[i], v = null;
      int eq = a.indexOf('=');
      if (a.startsWith("--") && eq > 0) {
        v = a.substring(eq + 1);
        a = a.substring(0, eq);
      }
      if (a.equals("--help") || a.equals("-h")) {
        System.out.println(usage);
        System.exit(0);
      }
      if (flagNames.contains(a) && v == null) {
        flags.add(a);
        continue;
      }
      if (!valueNames.contains(a))
        fail(a.startsWith("--") ? "unknown option " + a : "unexpected argument '" + a + "'");
      if (v == null) {
        if (i + 1 >= argv.length)
          fail(a + " needs a value");
        v = argv[++i];
      }
      values.put(a, v);
    }
  }

  /* Prints @message and the usage, exits 2. */
  void fail(String message) {
    System.err.println(prog + ": " + message);
    System.err.println(usage);
    System.exit(2);
  }

  boolean flag(String name) {
    return flags.contains(name);
  }

  String get(String name, String fallback) {
    return values.getOrDefault(name, fallback);
  }

  /* Fails naming @names when one of them is missing. */
  void require(String... names) {
    for (String n : names)
      if (!values.containsKey(n)) {
        int last = names.length - 1;
        fail(String.join(", ", java.util.Arrays.copyOf(names, last)) + " and " + names[last]
            + " are required");
      }
  }

  int positive(String name, int fallback) {
    String v = values.get(name);
    if (v == null)
      return fallback;
    try {
      int n = Integer.parseInt(v);
      if (n > 0)
        return n;
    } catch (NumberFormatException e) {
      /* reported below */
    }
    fail(name + ": '" + v + "' is not a positive number");
    return 0;
  }

  /* A number of seconds from 0.01 to 3600, in milliseconds. */
  long millis(String name, long fallback) {
    String v = values.get(name);
    if (v == null)
      return fallback;
    try {
      double s = Double.parseDouble(v);
      if (s >= 0.01 && s <= 3600)
        return Math.round(s * 1000);
    } catch (NumberFormatException e) {
      /* reported below */
    }
    fail(name + ": '" + v + "' is not a number of seconds from 0.01 to 3600");
    return 0;
  }

  /* --db, parsed; a bad URI is a usage error. */
  Db db() {
    try {
      return new Db(values.get("--db"));
    } catch (IllegalArgumentException e) {
      fail(e.getMessage());
      return null;
    }
  }

  /* The one line a peer prints when its run fails: the innermost cause,
   * its message alone when it is one of @ours (a message the peer wrote),
   * else with its class. */
  static String failure(Throwable e, Class<?>... ours) {
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root)
      root = root.getCause();
    for (Class<?> c : ours)
      if (c.isInstance(root))
        return root.getMessage();
    return root.toString();
  }
}
