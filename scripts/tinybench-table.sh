#!/usr/bin/env bash
# tinybench-table.sh: jeirt irt estimate --eval and tinyBenchmarks as its authors run it
# (scripts/peer_tinybench.py: py-irt's multidim_2pl with hierarchical priors, correctness
# anchors, p-IRT and gp-IRT) on the same model splits, for every shipped set but LSAT.
# Run from the repository root with ../shared/data present:
#
#   bash scripts/tinybench-table.sh [SEEDS] [EPOCHS]      (defaults 30 and 2000)
#
# jeirt's table first, then the peer's, per set, with the date and the load. Needs
# /usr/bin/python3 with numpy, scipy, torch and sklearn (Debian's python3-numpy,
# python3-scipy, python3-torch, python3-sklearn). The peer's SVI fits dominate the time.
set -euo pipefail
cd "$(dirname "$0")/.."
seeds=${1:-30}
epochs=${2:-2000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/jeirt" ./cmd/jeirt
data=../shared/data
for f in swebench-verified/response_matrix.csv rewardbench/response_matrix.csv tumlu/response_matrix.csv \
	chembench/binary_matrix.csv mmlupro-partial/response_matrix.csv; do
	echo "== $f $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || true)"
	"$tmp/jeirt" irt estimate --eval --data "$data/$f" --seeds "$seeds" --splits-out "$tmp/splits.csv" --force 2>/dev/null
	echo
	/usr/bin/python3 scripts/peer_tinybench.py --data "$data/$f" --splits "$tmp/splits.csv" --epochs "$epochs" --quiet
	echo
done
