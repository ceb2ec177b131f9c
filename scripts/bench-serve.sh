#!/usr/bin/env bash
# Bounded load test of jeirt serve on loopback: 64 concurrent clients send
# 100,000 single-query POST /v1/route requests (hash encoder) to a server in
# the same process; prints requests/s, p50/p99 latency, errors, RSS at the
# start, middle and end, and the machine's load average.
#   JEIRT_BENCH_REQUESTS, JEIRT_BENCH_CLIENTS, JEIRT_BENCH_SECONDS override the bounds.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)"
echo "cpus: $(nproc)  GOMAXPROCS: ${GOMAXPROCS:-default}"
go test ./cmd/internal/serve -run '^$' -bench '^BenchmarkServeLoad$' -benchtime=1x -count=1 -timeout 15m
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)"
