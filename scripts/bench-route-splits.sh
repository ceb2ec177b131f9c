#!/usr/bin/env bash
# The router against the best single model over many --by item splits (README,
# "Routing across splits"). One split of 100 (SWE-bench) or 597 (RewardBench)
# held-out questions moves the comparison by a point either way, so this script
# repeats it: for each seed it splits the questions (val 10%, test 20%), trains
# a JE-IRT checkpoint with the hash encoder, runs `jeirt route eval` on the
# test questions, and averages each rule's accuracy minus the best single
# model's, with the number of splits it wins and loses. The margin δ chosen on
# each split's val.csv is the row "router,margin-val,val".
#
#   scripts/bench-route-splits.sh [OUT]          (default OUT=/tmp/jeirt-route-splits)
#   SEEDS="1 2 3" SETS=rewardbench scripts/bench-route-splits.sh
#
# Existing split and checkpoint folders in OUT are reused. About 15 s (SWE-bench)
# and 60 s (RewardBench) of training per seed on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-${1:-/tmp/jeirt-route-splits}}
SETS=${SETS:-"swebench-verified rewardbench"}
SEEDS=${SEEDS:-"1 2 3 4 5 6 7 8 9 10"}
DATA=${DATA:-../shared/data}
mkdir -p "$OUT"
go build -o "$OUT/jeirt" ./cmd/jeirt
J="$OUT/jeirt"
for set in $SETS; do
	for seed in $SEEDS; do
		S="$OUT/$set-s$seed"
		[ -d "$S-items" ] || "$J" data split --data "$DATA/$set/response_matrix.csv" --items "$DATA/$set/item_content.csv" \
			--by item --val 0.1 --test 0.2 --seed "$seed" --out "$S-items" >/dev/null
		cat >"$S.yaml" <<EOT
data: {train: $S-items/train.csv, val: $S-items/val.csv, test: $S-items/test.csv, items: $S-items/items.csv}
encoder: {spec: hash}
model: {dim: 256, hidden: 0, dropout: 0.5}
train: {epochs: 30, batch_size: 512, lr: 1.0e-3, weight_decay: 0.01, gamma: 0.97, patience: 5, seed: 42, batching: by-question}
output: $S-ck
EOT
		[ -d "$S-ck" ] || "$J" train --config "$S.yaml" --no-baselines >"$S.log" 2>&1
		"$J" route eval --checkpoint "$S-ck" --data "$S-items/test.csv" --items "$S-items/items.csv" \
			--train "$S-items/train.csv" --val "$S-items/val.csv" --shortlist 2,3,5,10 --margin 0.02,0.05,0.1 \
			--out "$S-curve.csv" >/dev/null 2>"$S-eval.log"
	done
	echo "== $set: test accuracy over seeds $SEEDS (rule minus best single model, in points; W/L = splits won/lost)"
	for seed in $SEEDS; do awk -F, -v seed="$seed" 'NR > 1 { print seed "," $0 }' "$OUT/$set-s$seed-curve.csv"; done |
		awk -F, '
		{ key = $2 "," $3 "," ($3 == "margin-val" ? "val" : $4); acc[$1, key] = $5; if (!(key in seen)) { seen[key] = 1; order[++n] = key } ; seeds[$1] = 1 }
		END {
			for (s in seeds) { ns++; best[s] = acc[s, "best-single,best-single,"] }
			printf "%-28s %9s %9s %5s %5s\n", "policy,rule,param", "mean acc", "vs best", "W", "L"
			for (k = 1; k <= n; k++) {
				key = order[k]; sum = 0; d = 0; w = 0; l = 0
				for (s in seeds) {
					sum += acc[s, key]; diff = acc[s, key] - best[s]; d += diff
					if (diff > 1e-9) w++; else if (diff < -1e-9) l++
				}
				printf "%-28s %9.4f %+8.2f %5d %5d\n", key, sum / ns, 100 * d / ns, w, l
			}
		}'
done
