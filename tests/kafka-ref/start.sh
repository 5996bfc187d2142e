#!/usr/bin/env bash
# Starts Apache Kafka 4.4 on loopback for the tests: three combined
# broker+controller KRaft nodes, each on a free port, small heaps, set for a
# 3-node cluster (replication factor 3 for the internal topics,
# min.insync.replicas 2). Fetches the broker with Maven on first use
# (tests/kafka-ref/pom.xml, pinned; jars in tests/kafka-ref/target/lib).
#
#   tests/kafka-ref/start.sh DIR [--owner-pid PID] [--lifetime SECONDS]
#
# DIR receives the nodes' data, logs and properties, and `cluster.env`
# (KAFKA_BOOTSTRAP, KAFKA_NODE{1,2,3}_PORT, KAFKA_NODE{1,2,3}_PID,
# KAFKA_CLASSPATH), written once every node answers. The nodes stop by
# themselves when PID (default: this script's parent) ends or after
# SECONDS (default 3600); tests/kafka-ref/stop.sh DIR stops them at once.
# Every wait is bounded; a missing Java or Maven is said in one line
# (exit 2).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
usage() { echo "usage: $0 DIR [--owner-pid PID] [--lifetime SECONDS]" >&2; exit 2; }
[ $# -ge 1 ] || usage
dir=$1; shift
owner=$PPID
lifetime=3600
while [ $# -gt 0 ]; do
  case $1 in
    --owner-pid) owner=${2:?}; shift 2 ;;
    --lifetime) lifetime=${2:?}; shift 2 ;;
    *) usage ;;
  esac
done

java=${JAVA:-java}
if [ -d /usr/lib/jvm/java-17-openjdk-amd64 ] && [ -z "${JAVA:-}" ]; then
  java=/usr/lib/jvm/java-17-openjdk-amd64/bin/java
fi
command -v "$java" >/dev/null 2>&1 || { echo "kafka-ref: no Java found (install a JDK 17 or set JAVA)" >&2; exit 2; }

"$here/fetch.sh"
classpath="$here/target/lib/*"

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
rm -f "$dir/cluster.env"

# Six free loopback ports (a broker and a controller listener per node),
# taken from the kernel and released just before Kafka binds them.
read -r -a ports < <(python3 - <<'PY'
import socket
socks = []
for _ in range(6):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
PY
)
voters="1@127.0.0.1:${ports[3]},2@127.0.0.1:${ports[4]},3@127.0.0.1:${ports[5]}"
cat > "$dir/log4j2.properties" <<L4J
status = warn
appender.file.type = File
appender.file.name = file
appender.file.fileName = \${sys:kafka.logs.dir}/server.log
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = file
logger.kafka.name = kafka
logger.kafka.level = INFO
logger.state.name = state.change.logger
logger.state.level = WARN
L4J

for n in 1 2 3; do
  node="$dir/node$n"
  rm -rf "$node"
  mkdir -p "$node/data" "$node/logs"
  cat > "$node/server.properties" <<PROPS
process.roles=broker,controller
node.id=$n
controller.quorum.voters=$voters
listeners=PLAINTEXT://127.0.0.1:${ports[$((n - 1))]},CONTROLLER://127.0.0.1:${ports[$((n + 2))]}
advertised.listeners=PLAINTEXT://127.0.0.1:${ports[$((n - 1))]}
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
log.dirs=$node/data
num.partitions=1
default.replication.factor=3
offsets.topic.replication.factor=3
offsets.topic.num.partitions=3
transaction.state.log.replication.factor=3
transaction.state.log.min.isr=2
transaction.state.log.num.partitions=3
min.insync.replicas=2
group.initial.rebalance.delay.ms=0
transaction.abort.timed.out.transaction.cleanup.interval.ms=2000
transaction.remove.expired.transaction.cleanup.interval.ms=5000
replica.lag.time.max.ms=6000
broker.session.timeout.ms=6000
broker.heartbeat.interval.ms=1000
num.network.threads=2
num.io.threads=2
background.threads=2
log.cleaner.enable=false
auto.create.topics.enable=false
PROPS
done

cluster_id=$("$java" -cp "$classpath" kafka.tools.StorageTool random-uuid 2>/dev/null | tail -1)
for n in 1 2 3; do
  node="$dir/node$n"
  "$java" -Xmx256m -Dkafka.logs.dir="$node/logs" -Dlog4j2.configurationFile="$dir/log4j2.properties" \
    -cp "$classpath" kafka.tools.StorageTool format -t "$cluster_id" -c "$node/server.properties" \
    >"$node/logs/format.out" 2>&1 || { echo "kafka-ref: formatting node $n failed: $(tail -1 "$node/logs/format.out")" >&2; exit 1; }
done

pids=()
for n in 1 2 3; do
  pids+=("$("$here/node.sh" "$dir" "$n")")
done

# The watchdog: the nodes end with their owner, or after the lifetime.
setsid bash -c '
  owner=$1 lifetime=$2 dir=$3
  end=$((SECONDS + lifetime))
  while kill -0 "$owner" 2>/dev/null && [ $SECONDS -lt $end ]; do
    { [ -f "$dir/stopped" ] || [ ! -d "$dir" ]; } && exit 0
    sleep 1
  done
  "$(dirname "$0")"/stop.sh "$dir" >/dev/null 2>&1
' "$here/watchdog" "$owner" "$lifetime" "$dir" </dev/null >/dev/null 2>&1 &

# Ready when every node logs that it started (bounded: 120 s).
deadline=$((SECONDS + 120))
for n in 1 2 3; do
  node="$dir/node$n"
  until grep -q "Kafka Server started" "$node/logs/server.log" 2>/dev/null; do
    if ! kill -0 "${pids[$((n - 1))]}" 2>/dev/null; then
      echo "kafka-ref: node $n exited while starting: $(tail -1 "$node/logs/stdout" 2>/dev/null)" >&2
      "$here/stop.sh" "$dir" >/dev/null 2>&1; exit 1
    fi
    if [ $SECONDS -ge $deadline ]; then
      echo "kafka-ref: node $n did not start within 120 s (see $node/logs/server.log)" >&2
      "$here/stop.sh" "$dir" >/dev/null 2>&1; exit 1
    fi
    sleep 0.2
  done
done

{
  echo "KAFKA_BOOTSTRAP=127.0.0.1:${ports[0]},127.0.0.1:${ports[1]},127.0.0.1:${ports[2]}"
  for n in 1 2 3; do
    echo "KAFKA_NODE${n}_PORT=${ports[$((n - 1))]}"
    echo "KAFKA_NODE${n}_PID=${pids[$((n - 1))]}"
  done
  echo "KAFKA_CLASSPATH=$classpath"
  echo "KAFKA_JAVA=$java"
} > "$dir/cluster.env.tmp"
mv "$dir/cluster.env.tmp" "$dir/cluster.env"
cat "$dir/cluster.env"
