#!/usr/bin/env bash
# Adaptive testing on SWE-bench Verified (docs/irt.md, "Adaptive testing"):
# for each seed, hold 10 of the 134 models out (jeirt data split --by model
# --test 0.075), fit the 2PL on the other 124, and test the 10 with
# `jeirt irt cat`, each rule with a budget of 50 items (10% of the 500) and
# with a target standard error of 0.3, against each model's θ from all 500
# of its answers. Prints the markdown tables of docs/irt.md: mean and spread
# over the seeds of Spearman's ρ, the RMSE and the items used.
#
#   scripts/cat-swebench.sh [OUT]        (default OUT=/tmp/jeirt-cat-swebench)
#   SEEDS="1 2 3" scripts/cat-swebench.sh
#
# About 20 s on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=$PATH:/usr/local/go/bin
OUT=${OUT:-${1:-/tmp/jeirt-cat-swebench}}
SEEDS=${SEEDS:-"1 2 3 4 5"}
DATA=configs/data/swebench-verified/response_matrix.csv
mkdir -p "$OUT"
go build -o "$OUT/jeirt" ./cmd/jeirt
J="$OUT/jeirt"
# q CMD...: runs CMD quietly; when it fails, says which command and what it printed.
q() {
	local log
	log=$("$@" 2>&1) || {
		echo "cat-swebench: failed: $*" >&2
		tail -5 <<<"$log" >&2
		exit 1
	}
}
for seed in $SEEDS; do
	S="$OUT/s$seed"
	q "$J" data split --data "$DATA" --by model --val 0 --test 0.075 --seed "$seed" --out "$S-split" --force
	q "$J" irt fit --data "$S-split/train.csv" --out "$S-fit" --force
	q "$J" irt fit --data "$S-split/train.csv" --rank 2 --signed --out "$S-fit-r2" --force
	run() { # name, fit, flags...
		local name=$1 fit=$2
		shift 2
		q "$J" irt cat --fit "$fit" --data "$S-split/test.csv" --seed "$seed" --out "$S-$name" --force "$@"
	}
	for rule in fisher kl random; do
		run "b50-$rule" "$S-fit" --rule "$rule" --budget 50
		run "se-$rule" "$S-fit" --rule "$rule" --target-se 0.3
	done
	run b50-fisher-excl "$S-fit" --rule fisher --budget 50 --exclude-flagged
	run se-fisher-excl "$S-fit" --rule fisher --target-se 0.3 --exclude-flagged
	run se-fisher-min15 "$S-fit" --rule fisher --target-se 0.3 --min-items 15
	run b50-eap "$S-fit" --rule fisher --estimator eap --budget 50
	run b50-dopt-r2 "$S-fit-r2" --rule d-optimal --budget 50
	for b in 5 10 20 30 100; do
		run "curve$b-fisher" "$S-fit" --rule fisher --budget "$b"
		run "curve$b-random" "$S-fit" --rule random --budget "$b"
	done
done
OUT="$OUT" SEEDS="$SEEDS" python3 - <<'EOF'
import json, os, statistics as st
out, seeds = os.environ["OUT"], os.environ["SEEDS"].split()
def get(name, key):
    return [json.load(open(f"{out}/s{s}-{name}/cat.json"))["summary"][key] for s in seeds]
def ms(v, d=3):
    return f"{st.mean(v):.{d}f} ± {st.stdev(v):.{d}f}" if len(v) > 1 else f"{v[0]:.{d}f}"
def rng(v):
    return f"{min(v):.3f}–{max(v):.3f}"
print(f"Budget 50 items (10%), {len(seeds)} seeds (10 held-out models each): mean ± sd over seeds (range)\n")
print("| rule | Spearman ρ | RMSE | Pearson r |")
print("|---|---|---|---|")
for name, label in [("b50-fisher", "fisher (MAP)"), ("b50-fisher-excl", "fisher, --exclude-flagged"), ("b50-eap", "fisher, --estimator eap"),
                    ("b50-kl", "kl"), ("b50-dopt-r2", "d-optimal, rank-2 --signed fit (dimension 1)"), ("b50-random", "random")]:
    sp, rm, pe = get(name, "spearman"), get(name, "rmse"), get(name, "pearson")
    print(f"| {label} | {ms(sp)} ({rng(sp)}) | {ms(rm)} ({rng(rm)}) | {ms(pe)} |")
print(f"\nTarget SE 0.3, {len(seeds)} seeds: items used per model and the error against the full-data θ\n")
print("| rule | items used | RMSE | Spearman ρ |")
print("|---|---|---|---|")
for name, label in [("se-fisher", "fisher"), ("se-fisher-excl", "fisher, --exclude-flagged"), ("se-fisher-min15", "fisher, --min-items 15"), ("se-kl", "kl"), ("se-random", "random")]:
    print(f"| {label} | {ms(get(name, 'mean_items'), 1)} | {ms(get(name, 'rmse'))} | {ms(get(name, 'spearman'))} |")
print(f"\nRMSE against the full-data θ by budget, {len(seeds)} seeds\n")
print("| items | fisher | random |")
print("|---|---|---|")
for b in ["5", "10", "20", "30", "50", "100"]:
    f = "b50-fisher" if b == "50" else f"curve{b}-fisher"
    r = "b50-random" if b == "50" else f"curve{b}-random"
    print(f"| {b} | {ms(get(f, 'rmse'))} | {ms(get(r, 'rmse'))} |")
EOF
