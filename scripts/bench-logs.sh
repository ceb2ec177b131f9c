#!/usr/bin/env bash
# Reads a tree of each evaluation tool's logs (written by the harness
# package's TestWriteBenchTree: MODELS models x ITEMS items with 1 KB
# texts) with `jeirt data inspect`, and prints per tool the size of the
# logs, the cells read, wall and CPU seconds and the peak RSS (GNU time), with
# the 1-minute load average before each run: the memory held should follow
# the cells and the items' texts, not the size of the logs.
#
#   scripts/bench-logs.sh [WORKDIR]            # default /tmp/jeirt-bench-logs
#   MODELS=100 ITEMS=10000 scripts/bench-logs.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export PATH=$PATH:/usr/local/go/bin
work=${1:-/tmp/jeirt-bench-logs}
MODELS=${MODELS:-40}
ITEMS=${ITEMS:-4000}
rm -rf "$work" && mkdir -p "$work/logs"
cd "$root"
go build -o "$work/jeirt" ./cmd/jeirt
JEIRT_BENCH_LOGS_DIR=$work/logs JEIRT_BENCH_LOGS_MODELS=$MODELS JEIRT_BENCH_LOGS_ITEMS=$ITEMS \
	go test -count=1 -run '^TestWriteBenchTree$' ./model/read/harness >/dev/null
printf '%-8s %10s %10s %8s %8s %8s %10s %6s\n' tool "logs MB" cells "wall s" "user s" "sys s" "peak RSS" load
for tool in lm-eval helm inspect eee; do
	mb=$(du -sm "$work/logs/$tool" | cut -f1)
	load=$(cut -d' ' -f1 /proc/loadavg)
	/usr/bin/time -f '%e %U %S %M' -o "$work/time" "$work/jeirt" data inspect "$work/logs/$tool" >"$work/out"
	cells=$(sed -n 's/^models: .*cells: \([0-9]*\).*/\1/p' "$work/out")
	read -r wall user sys rss <"$work/time"
	printf '%-8s %10s %10s %8s %8s %8s %7d MB %6s\n' "$tool" "$mb" "$cells" "$wall" "$user" "$sys" $((rss / 1024)) "$load"
done
