#!/usr/bin/env bash
# Starts node N of the cluster tests/kafka-ref/start.sh DIR laid out (also
# after a test killed it: its data directory is kept), in the background,
# and prints its PID (also written to DIR/nodeN/pid). It does not wait for
# the node to answer: start.sh does, and a test restarting one node waits
# for its port.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:?usage: $0 DIR N}; n=${2:?usage: $0 DIR N}
java=${JAVA:-java}
if [ -d /usr/lib/jvm/java-17-openjdk-amd64 ] && [ -z "${JAVA:-}" ]; then
  java=/usr/lib/jvm/java-17-openjdk-amd64/bin/java
fi
node="$dir/node$n"
# The server log is appended to across restarts; the ready marker is
# counted from here on.
touch "$node/logs/server.log"
setsid "$java" -Xms128m -Xmx512m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xss512k \
  -Dkafka.logs.dir="$node/logs" -Dlog4j2.configurationFile="$dir/log4j2.properties" \
  -cp "$here/target/lib/*" kafka.Kafka "$node/server.properties" \
  >>"$node/logs/stdout" 2>&1 </dev/null &
echo "$!" > "$node/pid"
echo "$!"
