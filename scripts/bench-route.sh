#!/usr/bin/env bash
# Measurements of README's "New models and routing" section, on the real data in
# ../shared/data (SWE-bench Verified and RewardBench), with the hash encoder.
#
#   scripts/bench-route.sh [OUT]            (default OUT=/tmp/jeirt-bench-route)
#   SETS="swebench-verified" scripts/bench-route.sh
#   SKIP_ONBOARD=1 scripts/bench-route.sh   (sections 2 and 3 only)
#   ONBOARD_SEEDS="42" scripts/bench-route.sh  (section 1 on the main split only)
#
# 1. Onboarding curve and --suggest (adaptive rounds, one-shot designs) vs random
#    questions, on --by model splits holding out 10% of the models (seeds 42 and 1):
#    go test -bench BenchmarkOnboardCurve (see its doc comment).
# 2. Routing on a --by item split: jeirt data split, jeirt train, jeirt route eval
#    (the margin δ chosen on the split's val.csv, scored on test.csv)
#    with synthetic costs (a model's cost = its accuracy on the training split,
#    a stand-in for "better models cost more"; no real prices ship with the data).
# 3. Latency: one query through `jeirt route` after loading, and 10,000 queries
#    (go test -bench 'BenchmarkRoute' plus the CLI on a 10,000-line file).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-${1:-/tmp/jeirt-bench-route}}
SETS=${SETS:-"swebench-verified rewardbench"}
DATA=../shared/data
EPOCHS=${EPOCHS:-30}
mkdir -p "$OUT"
go build -o "$OUT/jeirt" ./cmd/jeirt
J="$OUT/jeirt"

if [ -z "${SKIP_ONBOARD:-}" ]; then
echo "== 1. onboarding curve (by model, 10% of models held out)"
for seed in ${ONBOARD_SEEDS:-42 1}; do
	for set in $SETS; do
		JEIRT_BENCH_CACHE="$OUT/cache" JEIRT_BENCH_DATA=$set JEIRT_BENCH_SEED=$seed \
			go test -run '^$' -bench BenchmarkOnboardCurve -benchtime 1x -timeout 60m ./train/onboard/ | grep -v '^goos\|^goarch\|^pkg\|^cpu'
	done
done
fi

echo "== 2. routing on a --by item split"
for set in $SETS; do
	S="$OUT/$set-items"
	[ -d "$S" ] || "$J" data split --data "$DATA/$set/response_matrix.csv" --items "$DATA/$set/item_content.csv" \
		--by item --val 0.1 --test 0.2 --seed 42 --out "$S"
	cat >"$OUT/$set-by-item.yaml" <<EOF
data: {train: $S/train.csv, val: $S/val.csv, test: $S/test.csv, items: $S/items.csv}
encoder: {spec: hash}
model: {dim: 256, hidden: 0, dropout: 0.5}
train: {epochs: $EPOCHS, batch_size: 512, lr: 1.0e-3, weight_decay: 0.01, gamma: 0.97, patience: 5, seed: 42, batching: by-question}
output: $OUT/$set-by-item
EOF
	[ -d "$OUT/$set-by-item" ] || "$J" train --config "$OUT/$set-by-item.yaml" --no-baselines 2>&1 | tail -4
	# Synthetic costs: each model's accuracy on the training split.
	awk -F, 'NR > 1 && $3 != "" { n[$1]++; s[$1] += $3 } END { print "model,cost"; for (m in n) printf "%s,%.4f\n", m, s[m] / n[m] }' \
		"$S/train.csv" >"$OUT/$set-costs.csv"
	"$J" route eval --checkpoint "$OUT/$set-by-item" --data "$S/test.csv" --items "$S/items.csv" \
		--train "$S/train.csv" --val "$S/val.csv" --costs "$OUT/$set-costs.csv" --out "$OUT/$set-route-curve.csv"
done

echo "== 3. routing latency (hash encoder)"
CK="$OUT/swebench-verified-by-item"
echo "Fix the off-by-one error in the pagination helper when the last page is empty" >"$OUT/one.txt"
for k in 1 2 3; do "$J" route "$OUT/one.txt" --checkpoint "$CK" --top 2 >/dev/null; done
/usr/bin/time -f "one query, whole process: %e s wall, %M KB max RSS" "$J" route "$OUT/one.txt" --checkpoint "$CK" --top 2
# 10,000 query lines cut from the SWE-bench Verified problem statements.
: >"$OUT/q10k.txt"
while [ "$(wc -l <"$OUT/q10k.txt")" -lt 10000 ]; do
	awk -v have="$(wc -l <"$OUT/q10k.txt")" 'NR > 1 && length($0) > 20 && have + n < 10000 { print; n++ }' \
		"$OUT/swebench-verified-items/items.csv" >>"$OUT/q10k.txt"
done
/usr/bin/time -f "10,000 queries, whole process: %e s wall" "$J" route "$OUT/q10k.txt" --checkpoint "$CK" --print csv >/dev/null
JEIRT_ROUTE_CHECKPOINT="$CK" go test -run '^$' -bench 'BenchmarkRoute' -benchtime 20x ./train/route/ | grep Benchmark
