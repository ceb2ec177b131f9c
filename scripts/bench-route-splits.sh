#!/usr/bin/env bash
# The router against the best single model over ten item splits of each shipped
# benchmark (docs/onboarding-routing.md, "Routing across splits"): one
# `jeirt route eval --splits` per set, which splits the questions (val 10%,
# test 20%; seeds 1-10), trains a checkpoint on each split with jeirt train's
# defaults (hash encoder) and its routing cross-validation, and scores every
# rule and the recorded default on the test questions, with intervals. It also
# reports the out-of-domain check's false-flag rate on the held-out questions
# and how often it flags configs/ood-prompts.txt.
#
#   scripts/bench-route-splits.sh [OUT]          (default OUT=/tmp/jeirt-route-splits)
#   SPLITS=3 SETS=swebench-verified scripts/bench-route-splits.sh
#
# On 2 cores (2026-12-01, load 1.6-1.8), 9 s for SWE-bench Verified and about
# 3 minutes for RewardBench (per split a training and the 5 cross-validation
# refits).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-${1:-/tmp/jeirt-route-splits}}
SETS=${SETS:-"swebench-verified rewardbench"}
SPLITS=${SPLITS:-10}
DATA=${DATA:-../shared/data}
mkdir -p "$OUT"
go build -o "$OUT/jeirt" ./cmd/jeirt
for set in $SETS; do
	d=$DATA/$set
	[ -d "$d" ] || d=configs/data/$set
	echo "== $set ($d), $(uptime)"
	"$OUT/jeirt" route eval --data "$d/response_matrix.csv" --items "$d/item_content.csv" --splits "$SPLITS" --seed 1 \
		--foreign configs/ood-prompts.txt --out "$OUT/$set-curve.csv" --force 2> "$OUT/$set.log" | tee "$OUT/$set.txt"
done
