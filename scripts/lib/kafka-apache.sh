# scripts/lib/kafka-apache.sh - a real Apache Kafka cluster for ktally's
# tests: N (default 3) KRaft nodes on loopback, each broker and controller
# at once, started from the jars that scripts/setup fetched with Maven
# (scripts/kafka/pom.xml). Sourced by scripts/services, whose helpers
# (die, say, pick_port, port_busy, live_pid, wait_gone, need_cmd) and
# state ($repo, $dir) it uses; scripts/setup sources it for
# kafka_apache_fetch alone.
#
# State: $dir/kafka/ holds `line` (3.9, 4.0 or 4: what the data was formatted
# with), `ports` ("NODE BROKER_PORT CONTROLLER_PORT SASL_SSL_PORT" lines,
# kept across restarts so that a restarted node is found where it was),
# `cluster-id`, `tls/` (a test CA and the brokers' certificate, made with
# openssl), and one folder per node (server.properties, data/, pid,
# out.log).
#
# Each broker listens twice: PLAINTEXT, which every test uses and whose
# principal (User:ANONYMOUS) is a super user, and SASL_SSL with
# SCRAM-SHA-512 (users made with `scripts/services scram-user`) and PLAIN
# (the users of tls/users), where StandardAuthorizer's ACLs apply (made
# with kt-admin acl): for the tests of security, without touching the
# others.
#
# Sized for a 2-core machine shared with MariaDB and the tests: small heaps,
# the serial collector, C1 only (start-up and idle CPU matter more here than
# peak throughput; KT_KAFKA_JVM_OPTS adds to or overrides these), few
# threads, short test-friendly timers (see kafka_apache_properties).

kafka_apache_pom=$repo/scripts/kafka/pom.xml
kafka_apache_cache=${KT_KAFKA_CACHE:-$repo/build/kafka}
kafka_apache_mvn_repo=${KT_MAVEN_REPO:-$repo/build/maven-repo}
kafka_apache_lines="3.9 4.0 4"

# kafka_apache_version LINE: the version pinned for LINE in the pom.
kafka_apache_version() {
  local v
  v=$(sed -n "s|.*<kafka\.line\.$1>\([^<]*\)</kafka\.line\.$1>.*|\1|p" "$kafka_apache_pom")
  [[ -n $v ]] || { echo "kafka: no Kafka line '$1' in $kafka_apache_pom (lines: $kafka_apache_lines)" >&2; return 1; }
  echo "$v"
}

# kafka_apache_line WORD: the line (3.9, 4.0 or 4) for what --kafka-version
# may say (3.9, 3.9.2, 4.0, 4.0.0, 4, 4.1, 4.1.1).
kafka_apache_line() {
  case $1 in
    3.9 | 3.9.*) echo 3.9 ;;
    4.0 | 4.0.*) echo 4.0 ;;
    4 | 4.*) echo 4 ;;
    *) echo "kafka: --kafka-version $1: this tree tests the lines $kafka_apache_lines" >&2; return 1 ;;
  esac
}

# The classpath of LINE, written by kafka_apache_fetch; stale when the pom
# changed since (its checksum is kept beside it) or a jar is gone (another
# KT_MAVEN_REPO, a cleaned cache).
kafka_apache_classpath_ok() {
  local cp=$kafka_apache_cache/$1.classpath jar
  [[ -s $cp && -s $cp.pom-sha ]] || return 1
  [[ $(<"$cp.pom-sha") == "$(sha256sum <"$kafka_apache_pom" | cut -d' ' -f1)" ]] || return 1
  while IFS= read -r -d: jar; do
    [[ -s $jar ]] || return 1
  done < <(tr -d '\n' <"$cp"; printf :)
}

# kafka_apache_fetch: every line's jars into the local Maven repository and
# its classpath into the cache; touches nothing (and runs no Maven) when
# both are there already.
kafka_apache_fetch() {
  local line cp
  for line in $kafka_apache_lines; do
    cp=$kafka_apache_cache/$line.classpath
    if kafka_apache_classpath_ok "$line"; then
      echo "setup: Apache Kafka $(kafka_apache_version "$line") present ($cp)"
      continue
    fi
    command -v mvn >/dev/null || { echo "setup: mvn not found (the maven package)" >&2; return 1; }
    echo "setup: fetching Apache Kafka $(kafka_apache_version "$line") with Maven into $kafka_apache_mvn_repo"
    mkdir -p "$kafka_apache_cache"
    if ! mvn -q -B -f "$kafka_apache_pom" -Dmaven.repo.local="$kafka_apache_mvn_repo" \
      -P "kafka-$line" dependency:build-classpath -Dmdep.includeScope=runtime \
      -Dmdep.outputFile="$cp.tmp" >"$kafka_apache_cache/mvn-$line.log" 2>&1; then
      tail -n 20 "$kafka_apache_cache/mvn-$line.log" >&2
      echo "setup: Maven could not fetch Apache Kafka $line (log: $kafka_apache_cache/mvn-$line.log)" >&2
      return 1
    fi
    mv -f "$cp.tmp" "$cp"
    sha256sum <"$kafka_apache_pom" | cut -d' ' -f1 >"$cp.pom-sha"
  done
}

# ---------------------------------------------------------------------------
# The cluster (scripts/services only from here on)

kafka_apache_dir=${dir:-}/kafka
kafka_apache_nodes=${KT_BROKER_COUNT:-3}
# Per JVM; three of them fit beside MariaDB and the tests on 24 GB.
kafka_apache_heap=${KT_KAFKA_HEAP:-384m}

kafka_apache_node_dir() { echo "$kafka_apache_dir/$1"; }
kafka_apache_pid() {
  live_pid "$kafka_apache_dir/$1/pid" "$kafka_apache_dir/$1/server.properties"
}
kafka_apache_port() {  # kafka_apache_port NODE broker|controller|sasl
  local col=2
  [[ $2 == controller ]] && col=3
  [[ $2 == sasl ]] && col=4
  awk -v n="$1" -v c="$col" '$1 == n { print $c }' "$kafka_apache_dir/ports"
}
kafka_apache_sasl_bootstrap() {  # the SASL_SSL listeners, empty when there are none
  local n p list=
  for ((n = 1; n <= kafka_apache_nodes; n++)); do
    p=$(kafka_apache_port "$n" sasl)
    [[ -n $p ]] || return 0
    list+=${list:+,}127.0.0.1:$p
  done
  echo "$list"
}

# A state dir from before the SASL_SSL listener has three columns in
# `ports`: give each node a fourth while none runs (a running node would
# not listen on it).
kafka_apache_sasl_ports() {
  local n tmp
  [[ -s $kafka_apache_dir/ports ]] || return 0
  [[ -z $(awk 'NF < 4' "$kafka_apache_dir/ports") ]] && return 0
  for ((n = 1; n <= kafka_apache_nodes; n++)); do
    kafka_apache_pid "$n" >/dev/null && return 0
  done
  tmp=$kafka_apache_dir/ports.tmp
  : >"$tmp"
  for ((n = 1; n <= kafka_apache_nodes; n++)); do
    echo "$n $(kafka_apache_port "$n" broker) $(kafka_apache_port "$n" controller) $(pick_port)" >>"$tmp"
  done
  mv -f "$tmp" "$kafka_apache_dir/ports"
}

# The TLS material of the SASL_SSL listeners, made once per state dir: a
# CA (tls/ca.pem, what clients verify against) and one certificate for
# every broker (127.0.0.1 and localhost), in a PKCS#12 keystore.
kafka_apache_tls() {
  local t=$kafka_apache_dir/tls
  [[ -s $t/broker.p12 && -s $t/ca.pem && -s $t/users ]] && return 0
  need_cmd openssl
  rm -rf "$t"; mkdir -p "$t"
  (
    cd "$t"
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 3650 \
      -subj "/CN=ktally test CA" -addext "basicConstraints=critical,CA:TRUE" \
      -addext "keyUsage=critical,keyCertSign,cRLSign"
    openssl req -newkey rsa:2048 -nodes -keyout broker.key -out broker.csr -subj "/CN=localhost"
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' >broker.ext
    openssl x509 -req -in broker.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out broker.pem \
      -days 3650 -extfile broker.ext
    head -c 18 /dev/urandom | base64 | tr -d '/+=' >keystore.password
    openssl pkcs12 -export -in broker.pem -inkey broker.key -certfile ca.pem -name broker \
      -out broker.p12 -passout "file:keystore.password"
    # Two SASL users for the tests: the job's, and one the ACLs do not name.
    for user in ktjob intruder; do
      echo "$user $(head -c 18 /dev/urandom | base64 | tr -d '/+=')"
    done >users
    chmod 600 ca.key broker.key keystore.password broker.p12 users
  ) >"$kafka_apache_dir/tls.log" 2>&1 || { cat "$kafka_apache_dir/tls.log" >&2; die "openssl could not make the test CA and certificates"; }
}
kafka_apache_bootstrap() {
  local n list=
  for ((n = 1; n <= kafka_apache_nodes; n++)); do
    list+=${list:+,}127.0.0.1:$(kafka_apache_port "$n" broker)
  done
  echo "$list"
}
kafka_apache_running_line() { cat "$kafka_apache_dir/line" 2>/dev/null || true; }

# How many brokers NODE's own metadata lists: all of them once the node is
# up, registered and unfenced.
kafka_apache_seen_brokers() {
  local port
  port=$(kafka_apache_port "$1" broker)
  kcat -b "127.0.0.1:$port" -L -J -m 3 2>/dev/null | jq '.brokers | length' 2>/dev/null || echo 0
}

kafka_apache_check_node() {
  local n=$1
  [[ $n =~ ^[0-9]+$ ]] && ((n >= 1 && n <= kafka_apache_nodes)) ||
    die "no broker '$n': the brokers are 1..$kafka_apache_nodes"
  [[ -s $kafka_apache_dir/ports ]] || die "no Apache Kafka cluster in $dir (start --kafka apache)"
}

kafka_apache_properties() {  # kafka_apache_properties NODE: its server.properties
  local n=$1 voters= i rf=$((kafka_apache_nodes < 3 ? kafka_apache_nodes : 3))
  local isr=$((rf < 2 ? rf : 2))
  for ((i = 1; i <= kafka_apache_nodes; i++)); do
    voters+=${voters:+,}$i@127.0.0.1:$(kafka_apache_port "$i" controller)
  done
  cat <<EOF
# written by scripts/services start --kafka apache
process.roles=broker,controller
node.id=$n
controller.quorum.voters=$voters
listeners=PLAINTEXT://127.0.0.1:$(kafka_apache_port "$n" broker),CONTROLLER://127.0.0.1:$(kafka_apache_port "$n" controller),SASL_SSL://127.0.0.1:$(kafka_apache_port "$n" sasl)
advertised.listeners=PLAINTEXT://127.0.0.1:$(kafka_apache_port "$n" broker),SASL_SSL://127.0.0.1:$(kafka_apache_port "$n" sasl)
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SASL_SSL:SASL_SSL
log.dirs=$kafka_apache_dir/$n/data

# Security for the tests that want it, on a listener of its own: SCRAM
# over TLS, and ACLs. PLAINTEXT (every other test, the brokers between
# themselves, the controllers) is User:ANONYMOUS, a super user, so ACLs
# never stop it.
# PLAIN as well: librdkafka before 2.6.1 cannot do SCRAM with Kafka 4.x
# (its issue 4895); its users are tls/users (NAME PASSWORD lines).
sasl.enabled.mechanisms=SCRAM-SHA-512,PLAIN
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required $(awk '{ printf "user_%s=\"%s\" ", $1, $2 }' "$kafka_apache_dir/tls/users");
ssl.keystore.type=PKCS12
ssl.keystore.location=$kafka_apache_dir/tls/broker.p12
ssl.keystore.password=$(<"$kafka_apache_dir/tls/keystore.password")
ssl.key.password=$(<"$kafka_apache_dir/tls/keystore.password")
authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
super.users=User:ANONYMOUS
allow.everyone.if.no.acl.found=false

# Durability as in production: every topic on $rf brokers, acks=all needs $isr.
default.replication.factor=$rf
min.insync.replicas=$isr
offsets.topic.replication.factor=$rf
transaction.state.log.replication.factor=$rf
transaction.state.log.min.isr=$isr
share.coordinator.state.topic.replication.factor=$rf
share.coordinator.state.topic.min.isr=$isr
unclean.leader.election.enable=false
# Like the mock: a topic that a producer names is created, with 4 partitions.
# Tests create theirs up front (kt_new_topic) and say how many.
auto.create.topics.enable=true
num.partitions=4
# Internal topics small: they are created on first use, inside a test.
offsets.topic.num.partitions=8
transaction.state.log.num.partitions=8

# Tests wait on these timers: no 3 s first-join hold, a killed node fenced
# after 6 s, a producer that died in a transaction aborted within ~1 s of
# its transaction.timeout.ms, retention and the cleaner looked at every
# second (the defaults are minutes).
group.initial.rebalance.delay.ms=0
broker.heartbeat.interval.ms=1000
broker.session.timeout.ms=6000
transaction.abort.timed.out.transaction.cleanup.interval.ms=1000
log.retention.check.interval.ms=1000
log.initial.task.delay.ms=1000
log.cleaner.backoff.ms=1000
log.cleaner.dedupe.buffer.size=16777216

# Two cores: few threads.
num.network.threads=2
num.io.threads=2
num.replica.fetchers=1
num.recovery.threads.per.data.dir=1
background.threads=2
log.cleaner.threads=1
EOF
}

kafka_apache_log4j() {  # kafka_apache_log4j LINE: warnings, and each node's start line
  if [[ $1 == 3.* ]]; then
    cat <<'EOF'
log4j.rootLogger=WARN, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka.server.KafkaRaftServer=INFO
EOF
  else
    cat <<'EOF'
status = warn
appender.stdout.type = Console
appender.stdout.name = STDOUT
appender.stdout.layout.type = PatternLayout
appender.stdout.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = warn
rootLogger.appenderRef.stdout.ref = STDOUT
logger.raft.name = kafka.server.KafkaRaftServer
logger.raft.level = info
EOF
  fi
}

kafka_apache_java() {  # kafka_apache_java LINE: the java command line, without the main class
  local line=$1 cp=$kafka_apache_cache/$1.classpath
  local -a cmd=(java -Xms64m "-Xmx$kafka_apache_heap" -Xss512k
    -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:CICompilerCount=1
    -XX:ReservedCodeCacheSize=64m -XX:+ExitOnOutOfMemoryError
    -Djava.awt.headless=true)
  if [[ $line == 3.* ]]; then
    cmd+=("-Dlog4j.configuration=file:$kafka_apache_dir/log4j.properties")
  else
    cmd+=("-Dlog4j2.configurationFile=$kafka_apache_dir/log4j.properties")
  fi
  # shellcheck disable=SC2206  # words, on purpose
  cmd+=(${KT_KAFKA_JVM_OPTS:-} -cp "$(<"$cp")")
  printf '%q ' "${cmd[@]}"
}

# Formats the storage of every node: once per state dir and line (the
# three StorageTool runs in parallel, ~3 s).
kafka_apache_format() {
  local line=$1 n p id pids=()
  rm -rf "$kafka_apache_dir"
  mkdir -p "$kafka_apache_dir"
  : >"$kafka_apache_dir/ports"
  for ((n = 1; n <= kafka_apache_nodes; n++)); do
    echo "$n $(pick_port) $(pick_port) $(pick_port)" >>"$kafka_apache_dir/ports"
  done
  # Two nodes must not be handed the same port: pick_port only knows
  # which are busy now.
  [[ $(awk '{ print $2; print $3; print $4 }' "$kafka_apache_dir/ports" | sort | uniq -d) == "" ]] ||
    { rm -f "$kafka_apache_dir/ports"; kafka_apache_format "$line"; return; }
  # A cluster id is 16 random bytes in URL-safe base64 without padding,
  # never starting with '-' (StorageTool would take it for an option: one
  # start in 64 failed), as Kafka's own Uuid.randomUuid makes them.
  id=-
  while [[ $id == -* ]]; do
    id=$(head -c16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')
  done
  echo "$id" >"$kafka_apache_dir/cluster-id"
  kafka_apache_log4j "$line" >"$kafka_apache_dir/log4j.properties"
  kafka_apache_tls
  for ((n = 1; n <= kafka_apache_nodes; n++)); do
    p=$kafka_apache_dir/$n
    mkdir -p "$p/data"
    kafka_apache_properties "$n" >"$p/server.properties"
    eval "$(kafka_apache_java "$line") kafka.tools.StorageTool format -t $id -c $p/server.properties" \
      >"$p/format.log" 2>&1 &
    pids+=($!)
  done
  for ((n = 1; n <= kafka_apache_nodes; n++)); do
    wait "${pids[n - 1]}" || {
      tail -n 20 "$kafka_apache_dir/$n/format.log" >&2
      die "kafka-storage format failed for node $n (log: $kafka_apache_dir/$n/format.log)"
    }
  done
  echo "$line" >"$kafka_apache_dir/line"
}

kafka_apache_launch() {  # kafka_apache_launch NODE: starts it, returns at once
  local n=$1 line p
  line=$(kafka_apache_running_line)
  p=$kafka_apache_dir/$n
  rm -f "$p/pid"
  # Written again at every start: a state dir formatted by an older tree
  # gets the listeners and settings of this one, once it has their port
  # and TLS files (a node restarted alone in a cluster an older tree
  # started keeps the old file).
  if [[ -n $(kafka_apache_port "$n" sasl) && -s $kafka_apache_dir/tls/users ]]; then
    kafka_apache_properties "$n" >"$p/server.properties"
  fi
  # setsid: the node must outlive the shell that started it; $$ of the
  # inner shell is the JVM's pid after exec. fd 9 (our lock) stays here.
  setsid bash -c "echo \$\$ > $(printf %q "$p/pid"); exec $(kafka_apache_java "$line") kafka.Kafka $(printf %q "$p/server.properties")" \
    </dev/null >>"$p/out.log" 2>&1 9>&- &
}

# kafka_apache_wait NODE... : until each NODE answers and lists every
# broker, or dies trying (90 s: three JVMs starting on two busy cores).
kafka_apache_wait() {
  local n deadline=$((SECONDS + ${KT_KAFKA_START_TIMEOUT:-90}))
  for n in "$@"; do
    until [[ $(kafka_apache_seen_brokers "$n") == "$kafka_apache_nodes" ]]; do
      if ! kafka_apache_pid "$n" >/dev/null && [[ -s $kafka_apache_dir/$n/pid ]]; then
        tail -n 20 "$kafka_apache_dir/$n/out.log" >&2
        die "Kafka node $n exited at start-up (log: $kafka_apache_dir/$n/out.log)"
      fi
      ((SECONDS < deadline)) ||
        die "Kafka node $n did not list all $kafka_apache_nodes brokers within ${KT_KAFKA_START_TIMEOUT:-90} s (log: $kafka_apache_dir/$n/out.log)"
      sleep 0.2
    done
  done
}

kafka_apache_start() {  # kafka_apache_start LINE
  local line=$1 version n started=() t0=$SECONDS
  version=$(kafka_apache_version "$line") || exit 1
  need_cmd java
  need_cmd kcat
  need_cmd jq
  kafka_apache_classpath_ok "$line" ||
    die "Apache Kafka $version is not fetched (or its pom changed): run scripts/setup"
  if [[ -s $kafka_apache_dir/ports && $(kafka_apache_running_line) != "$line" ]]; then
    kafka_apache_stop
    say "the Kafka data in $kafka_apache_dir was $(kafka_apache_running_line); formatting it anew for $version"
    rm -rf "$kafka_apache_dir"
  fi
  if [[ ! -s $kafka_apache_dir/line ]]; then
    kafka_apache_format "$line"
  fi
  kafka_apache_sasl_ports
  kafka_apache_tls
  for ((n = 1; n <= kafka_apache_nodes; n++)); do
    if kafka_apache_pid "$n" >/dev/null; then continue; fi
    port_busy "$(kafka_apache_port "$n" broker)" &&
      die "port $(kafka_apache_port "$n" broker) of Kafka node $n is taken by another process (start --fresh picks new ones)"
    kafka_apache_launch "$n"
    started+=("$n")
  done
  local all=()
  for ((n = 1; n <= kafka_apache_nodes; n++)); do all+=("$n"); done
  kafka_apache_wait "${all[@]}"
  if ((${#started[@]} == 0)); then
    say "Apache Kafka $version already running ($(kafka_apache_bootstrap))"
  else
    say "Apache Kafka $version running: $kafka_apache_nodes brokers ($(kafka_apache_bootstrap)), ready in $((SECONDS - t0)) s"
  fi
}

kafka_apache_stop() {
  local n pid pids=()
  [[ -d $kafka_apache_dir ]] || return 0
  for ((n = 1; n <= kafka_apache_nodes; n++)); do
    if pid=$(kafka_apache_pid "$n"); then
      kill -CONT "$pid" 2>/dev/null || true  # a paused node cannot stop
      kill -TERM "$pid" 2>/dev/null || true
      pids+=("$pid")
    fi
  done
  ((${#pids[@]} > 0)) || return 0
  for pid in "${pids[@]}"; do
    if ! wait_gone "$pid" 30; then
      say "Kafka (pid $pid) ignored SIGTERM for 30 s: killing it"
      kill -KILL "$pid" 2>/dev/null || true
      wait_gone "$pid" 10 || die "Kafka (pid $pid) survives SIGKILL"
    fi
  done
  for ((n = 1; n <= kafka_apache_nodes; n++)); do rm -f "$kafka_apache_dir/$n/pid"; done
  say "Apache Kafka stopped"
}

kafka_apache_clean() { rm -rf "$kafka_apache_dir"; }

kafka_apache_status() {  # prints one line; false unless every node answers
  local n pid line out= rc=0
  line=$(kafka_apache_running_line)
  for ((n = 1; n <= kafka_apache_nodes; n++)); do
    if ! pid=$(kafka_apache_pid "$n"); then
      out+=" $n:stopped"; rc=3
    elif [[ $(ps -o stat= -p "$pid") == T* ]]; then
      out+=" $n:paused(pid $pid)"; rc=3
    elif [[ $(kafka_apache_seen_brokers "$n") == "$kafka_apache_nodes" ]]; then
      out+=" $n:running(pid $pid)"
    else
      out+=" $n:not-answering(pid $pid)"; rc=3
    fi
  done
  echo "kafka: apache $(kafka_apache_version "$line") ($(kafka_apache_bootstrap)):$out"
  return $rc
}

kafka_apache_env() {  # the env file's Kafka lines
  local n line
  line=$(kafka_apache_running_line)
  printf 'export KT_KAFKA=apache\n'
  printf 'export KT_KAFKA_VERSION=%q\n' "$(kafka_apache_version "$line")"
  printf 'export KT_KAFKA_LINE=%q\n' "$line"
  printf 'export KT_KAFKA_NODES=%q\n' "$kafka_apache_nodes"
  printf 'export KT_KAFKA_DIR=%q\n' "$kafka_apache_dir"
  printf 'export KT_BROKERS=%q\n' "$(kafka_apache_bootstrap)"
  for ((n = 1; n <= kafka_apache_nodes; n++)); do
    printf 'export KT_KAFKA_BROKER_%d=127.0.0.1:%s\n' "$n" "$(kafka_apache_port "$n" broker)"
  done
  if [[ -n $(kafka_apache_sasl_bootstrap) ]]; then
    echo '# SASL_SSL (SCRAM-SHA-512) listeners with ACLs, and the CA their certificate is from'
    printf 'export KT_KAFKA_SASL_BROKERS=%q\n' "$(kafka_apache_sasl_bootstrap)"
    printf 'export KT_KAFKA_CA=%q\n' "$kafka_apache_dir/tls/ca.pem"
    echo '# SASL users (PLAIN; SCRAM once given with scram-user): NAME PASSWORD lines'
    printf 'export KT_KAFKA_SASL_USERS=%q\n' "$kafka_apache_dir/tls/users"
  fi
  echo '# the mock'"'"'s control socket does not exist here: kt_ctl refuses'
  echo 'unset KT_BROKER_CTL KT_BROKER_PIDFILE KT_BROKER_LOG'
}

# kill-broker N (SIGKILL), restart-broker N (SIGKILL if running, start it
# again on its ports and data, wait until it is back in the cluster),
# pause-broker N (SIGSTOP), resume-broker N (SIGCONT).
kafka_apache_command() {  # kafka_apache_command VERB NODE
  local verb=$1 n=${2:-} pid
  if [[ $verb == scram-user ]]; then
    [[ -n $n ]] || die "scram-user needs a user name"
    [[ -s $kafka_apache_dir/ports ]] || die "no Apache Kafka cluster in $dir (start --kafka apache)"
  else
    [[ -n $n ]] || die "$verb needs a broker number (1..$kafka_apache_nodes)"
    kafka_apache_check_node "$n"
  fi
  case $verb in
    kill-broker)
      pid=$(kafka_apache_pid "$n") || { say "Kafka node $n is not running"; return 0; }
      kill -KILL "$pid"
      wait_gone "$pid" 10 || die "Kafka node $n (pid $pid) survives SIGKILL"
      rm -f "$kafka_apache_dir/$n/pid"
      say "Kafka node $n killed (pid $pid)"
      ;;
    restart-broker)
      if pid=$(kafka_apache_pid "$n"); then
        kill -KILL "$pid"
        wait_gone "$pid" 10 || die "Kafka node $n (pid $pid) survives SIGKILL"
      fi
      kafka_apache_launch "$n"
      kafka_apache_wait "$n"
      say "Kafka node $n restarted (pid $(kafka_apache_pid "$n"))"
      ;;
    scram-user)
      # The SCRAM-SHA-512 credentials of user $n (the name, here), the
      # password read from stdin, set with Kafka's own ConfigCommand.
      # Its --add-config-file turns SCRAM-SHA-512 into SCRAM_SHA_512 and
      # refuses it (4.1.1), so the password is in that JVM's argv for the
      # two seconds it runs: test credentials only.
      local password
      [[ $n =~ ^[A-Za-z0-9_.-]+$ ]] || die "scram-user: a user name of letters, digits, _ . - (got '$n')"
      IFS= read -r password || true
      [[ -n $password && $password != *[],[]* ]] || die "scram-user $n: no password on stdin (or one with , [ or ])"
      if ! eval "$(kafka_apache_java "$(kafka_apache_running_line)") kafka.admin.ConfigCommand" \
        --bootstrap-server "$(kafka_apache_bootstrap)" --alter --entity-type users \
        --entity-name "$n" --add-config "'SCRAM-SHA-512=[iterations=4096,password=$password]'" \
        >"$kafka_apache_dir/scram.log" 2>&1; then
        cat "$kafka_apache_dir/scram.log" >&2
        die "scram-user $n: Kafka's ConfigCommand failed"
      fi
      say "SCRAM-SHA-512 credentials of user $n set"
      ;;
    pause-broker | resume-broker)
      pid=$(kafka_apache_pid "$n") || die "Kafka node $n is not running"
      if [[ $verb == pause-broker ]]; then kill -STOP "$pid"; else kill -CONT "$pid"; fi
      say "Kafka node $n ${verb%-broker}d (pid $pid)"
      ;;
  esac
}
