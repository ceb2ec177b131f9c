#!/usr/bin/env bash
# The tables of docs/irt.md, "Scores from a few items": jeirt irt estimate
# --eval on every shipped data set with a few hundred models or more items
# than 100 (LSAT's 5 items are left out: 10% of them is no test), every
# selection rule x estimator, 30 model splits of 20% held out, K = min(100,
# 10% of the items). Run from the repository root with ../shared/data
# present: bash scripts/estimate-tables.sh [SEEDS]
set -euo pipefail
seeds=${1:-30}
go build -o /tmp/jeirt-estimate-tables ./cmd/jeirt
data=../shared/data
for f in swebench-verified/response_matrix.csv rewardbench/response_matrix.csv tumlu/response_matrix.csv \
	chembench/binary_matrix.csv mmlupro-partial/response_matrix.csv; do
	echo "== $f $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || true)"
	/tmp/jeirt-estimate-tables irt estimate --eval --data "$data/$f" --seeds "$seeds" 2>/dev/null
	echo
done
