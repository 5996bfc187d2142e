#!/usr/bin/env bash
# Brings Apache Kafka 4.4 (broker, tools, Java client) from Maven Central
# into tests/kafka-ref/target/lib, once; Maven's own cache (~/.m2) keeps
# the downloads for the next fresh clone on this machine.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ -f "$here/target/lib/.complete" ] && [ "$here/target/lib/.complete" -nt "$here/pom.xml" ]; then
  exit 0
fi
command -v mvn >/dev/null 2>&1 || { echo "kafka-ref: no Maven found (install maven, or run .ci/run)" >&2; exit 2; }
rm -rf "$here/target/lib"
mvn -q -B -f "$here/pom.xml" dependency:copy-dependencies \
  -DoutputDirectory="$here/target/lib" -DincludeScope=runtime >&2
touch "$here/target/lib/.complete"
