# tests/peers/common/spark-jvm.sh - the JVM options of the Spark peers
# (tests/peers/spark, spark-structured), sourced by their ./run scripts.

# What Spark's launcher (spark-submit) adds on Java 17: the module
# openings its code needs, from Spark 4.2's JavaModuleOptions (less
# --add-modules=jdk.incubator.vector, which only the ML code uses and
# which prints a warning at every start).
spark_opens=(
  -XX:+IgnoreUnrecognizedVMOptions
  --add-opens=java.base/java.lang=ALL-UNNAMED
  --add-opens=java.base/java.lang.invoke=ALL-UNNAMED
  --add-opens=java.base/java.lang.reflect=ALL-UNNAMED
  --add-opens=java.base/java.io=ALL-UNNAMED
  --add-opens=java.base/java.net=ALL-UNNAMED
  --add-opens=java.base/java.nio=ALL-UNNAMED
  --add-opens=java.base/java.util=ALL-UNNAMED
  --add-opens=java.base/java.util.concurrent=ALL-UNNAMED
  --add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED
  --add-opens=java.base/jdk.internal.ref=ALL-UNNAMED
  --add-opens=java.base/sun.nio.ch=ALL-UNNAMED
  --add-opens=java.base/sun.nio.cs=ALL-UNNAMED
  --add-opens=java.base/sun.security.action=ALL-UNNAMED
  --add-opens=java.base/sun.util.calendar=ALL-UNNAMED
  --add-opens=java.security.jgss/sun.security.krb5=ALL-UNNAMED
  -Dio.netty.tryReflectionSetAccessible=true
)
# Spark binds and names its driver by the host's address otherwise: keep it
# on loopback, like every service of the tests.
export SPARK_LOCAL_IP=${SPARK_LOCAL_IP:-127.0.0.1}
