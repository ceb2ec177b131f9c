#!/usr/bin/env bash
# What cells of several trials and graded scores cost cBMM: one MM iteration
# of the CPU backend on 112 x 20,000 cells (10% missing) of one simulated
# 2PL, observed as 0/1 answers (binary), k of n trials with n ~ U{1..10}
# (binomial) and scores on 11 levels (graded), the 1PL and the 3PL on the
# 0/1 cells (BenchmarkCBMMStepFamily); whole fits of the first three
# (BenchmarkCBMMFitFamily); and the binary iteration of BASE's code
# (default main, taken with git archive, nothing else touched) in the same
# run, interleaved (BenchmarkCBMMStepBinary), to show that the 0/1 path costs
# what it did. Prints the median of ROUNDS rounds of each, and the ratios:
# binomial and graded over binary (the target is at most 1.3), this binary
# over BASE's. Each round's load average is printed; compare on a quiet
# machine (load below 1.5), or read the ratios, which are within a round.
#
#   scripts/bench-graded.sh                 # BASE=main ROUNDS=5
#   BASE=f23de9a ROUNDS=3 scripts/bench-graded.sh
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
BASE=${BASE:-main}
ROUNDS=${ROUNDS:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/base"
git -C "$root" archive "$BASE" | tar -x -C "$tmp/base"
cp "$root/train/irt/cbmm_step_bench_test.go" "$tmp/base/train/irt/"
out=$tmp/results
for k in $(seq "$ROUNDS"); do
  echo "round $k: load $(cut -d' ' -f1 /proc/loadavg)"
  (cd "$root" && go test -run '^$' -bench 'CBMMStepFamily|CBMMStepBinary' -benchtime 20x ./train/irt/) |
    awk '/^Benchmark/ { sub(/-[0-9]+$/, "", $1); print "this", $1, $(NF-1) }' >>"$out"
  (cd "$tmp/base" && go test -run '^$' -bench 'CBMMStepBinary' -benchtime 20x ./train/irt/) |
    awk -v b="$BASE" '/^Benchmark/ { sub(/-[0-9]+$/, "", $1); print b, $1, $(NF-1) }' >>"$out"
  (cd "$root" && go test -run '^$' -bench 'CBMMFitFamily' -benchtime 2x ./train/irt/) |
    awk '/^Benchmark/ { sub(/-[0-9]+$/, "", $1); print "this", $1, $3 / 1e9, $(NF-3) }' >>"$out"
done
echo "load at the end: $(cut -d' ' -f1 /proc/loadavg)"
# Medians per (code, benchmark): ns per cell of one iteration; seconds of a whole fit.
sort -k1,2 -k3,3g "$out" | awk '
  { key = $1 " " $2; v[key, ++n[key]] = $3; it[key] = $4 }
  END {
    for (key in n) { m = n[key]; med[key] = (m % 2) ? v[key, (m+1)/2] : (v[key, m/2] + v[key, m/2+1]) / 2 }
    printf "%-8s %-44s %12s\n", "code", "benchmark", "ns/cell (fits: s)"
    for (key in med) { split(key, p, " "); printf "%-8s %-44s %12.4f%s\n", p[1], p[2], med[key], (it[key] != "" ? "   (" it[key] " iterations)" : "") }
    bin = med["this BenchmarkCBMMStepFamily/binary"]
    for (key in med) if (key ~ /StepFamily/ && bin > 0) { split(key, p, " "); r[p[2]] = med[key] / bin }
    print ""
    for (k in r) printf "ratio to binary, one iteration: %-40s %.3f\n", k, r[k]
    fb = med["this BenchmarkCBMMFitFamily/binary"]
    for (key in med) if (key ~ /FitFamily/ && fb > 0) { split(key, p, " "); printf "ratio to binary, whole fit (seconds): %-40s %.3f\n", p[2], med[key] / fb }
    for (key in med) if (key ~ /StepBinary/ && key !~ /^this/) { base = med[key] }
    if (base > 0) printf "binary iteration, this code over %s: %.3f\n", "'"$BASE"'", med["this BenchmarkCBMMStepBinary"] / base
  }' | sort
