#!/usr/bin/env bash
# Stops the Apache Kafka nodes tests/kafka-ref/start.sh DIR started (by
# PID: TERM, then KILL after 10 s).
set -uo pipefail
dir=${1:?usage: $0 DIR}
touch "$dir/stopped" 2>/dev/null
pids=()
for n in 1 2 3; do
  [ -f "$dir/node$n/pid" ] && pids+=("$(cat "$dir/node$n/pid")")
done
[ ${#pids[@]} -gt 0 ] || exit 0
kill "${pids[@]}" 2>/dev/null
for _ in $(seq 50); do
  alive=0
  for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
  [ $alive = 0 ] && exit 0
  sleep 0.2
done
kill -9 "${pids[@]}" 2>/dev/null
exit 0
