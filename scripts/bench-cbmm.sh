#!/bin/sh
# Benchmark jeirt's cBMM against the L-BFGS baseline and the Python peers on the
# EmbedLLM-sized 2PL set (112 x 36,000, 10% missing, seed 2), all in one run on
# the same machine, and print seconds to a relative loss gap of 1e-6 from the
# best loss any method reached.
#
#   scripts/bench-cbmm.sh [WORKDIR]
#
# Needs Go; the peers need Debian's python3-numpy and python3-scipy
# (apt-get install -y python3-numpy python3-scipy) and ../shared/bench/peers.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PEERS=${PEERS:-$ROOT/../shared/bench/peers}
W=${1:-$(mktemp -d)}
PY=/usr/bin/python3
mkdir -p "$W"
cd "$ROOT"
go build -o "$W/jeirt" ./cmd/jeirt
DATA=$W/data
if [ ! -f "$DATA/responses.csv" ]; then
	$PY "$PEERS/gen_synth.py" --out "$DATA" --gen 2pl --n 112 --j 36000 --missing 0.1 --seed 2 >/dev/null
fi
run() { # name, command...
	name=$1
	shift
	/usr/bin/time -f "%e s wall, %U s user" -o "$W/$name.time" "$@" >"$W/$name.log" 2>&1 || { cat "$W/$name.log"; exit 1; }
	echo "$name: $(cat "$W/$name.time")" >&2
}
# Like for like: the peers fit joint maximum likelihood, so jeirt's runs
# against them are --prior none; the default fit (its prior, its own
# stopping rule) is timed apart, from fit.json's seconds (fitting only, as
# the peers' times leave out their reading of a binary file).
run cbmm "$W/jeirt" irt fit --data "$DATA/responses.csv" --prior none --tol 1e-10 --accelerate=false --trace "$W/cbmm.trace" --force --out "$W/fit-cbmm"
run cbmm-accel "$W/jeirt" irt fit --data "$DATA/responses.csv" --prior none --tol 1e-10 --trace "$W/cbmm-accel.trace" --force --out "$W/fit-accel"
run lbfgs-go "$W/jeirt" irt fit --data "$DATA/responses.csv" --prior none --method lbfgs --tol 1e-10 --trace "$W/lbfgs-go.trace" --force --out "$W/fit-lbfgs"
run cbmm-default "$W/jeirt" irt fit --data "$DATA/responses.csv" --force --out "$W/fit-default"
if $PY -c "import numpy, scipy" 2>/dev/null; then
	run mm-numpy $PY "$PEERS/peer_2pl_mm_numpy.py" "$DATA" --tol 1e-8 --trace "$W/mm-numpy.trace"
	run lbfgs-scipy $PY "$PEERS/peer_2pl_lbfgs.py" "$DATA" --tol 1e-12 --gtol 1e-8 --trace "$W/lbfgs-scipy.trace"
else
	echo "python3 numpy/scipy missing: peers skipped" >&2
fi
# Per-iteration cost against two plain passes over the cells (Go benchmark).
go test -run - -bench 'CBMMPasses' -benchtime 10x ./train/irt/ >"$W/passes.txt" 2>&1 || true
grep Benchmark "$W/passes.txt" >&2 || true
$PY - "$W" <<'PY'
import csv, glob, os, sys
w = sys.argv[1]
traces = {}
for p in sorted(glob.glob(os.path.join(w, "*.trace"))):
    rows = list(csv.DictReader(open(p)))
    traces[os.path.basename(p)[:-6]] = [(float(r["seconds"]), float(r["loss"])) for r in rows]
best = min(l for t in traces.values() for _, l in t)
print(f"best loss {best:.4f}")
print("| method | iterations (trace points) | seconds to gap 1e-6 | total seconds | final loss | vs jeirt cbmm-accel |")
print("|---|---|---|---|---|---|")
gap = {}
for name, t in traces.items():
    hit = next((s for s, l in t if l - best <= 1e-6 * abs(best)), float("nan"))
    gap[name] = hit
ref = gap.get("cbmm-accel", float("nan"))
for name, t in traces.items():
    print(f"| {name} | {len(t)} | {gap[name]:.3f} | {t[-1][0]:.3f} | {t[-1][1]:.2f} | {gap[name] / ref:.1f}x |")
import json
d = json.load(open(os.path.join(w, "fit-default", "fit.json")))
peer = traces.get("mm-numpy")
line = f"default fit (prior {d['settings'].get('prior')}): {d['seconds']:.3f} s (fit.json), {d['iterations']} iterations, converged {d['converged']}"
if peer:
    line += f"; numpy cBMM to its own tolerance: {peer[-1][0]:.3f} s, {peer[-1][0] / d['seconds']:.1f}x the default fit's time"
print(line)
PY
