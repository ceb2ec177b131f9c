#!/usr/bin/env bash
# One JE-IRT training epoch on EmbedLLM-sized synthetic data (112 models x 36,000
# questions, D = 384 features, d = 256, hidden 768; gen_synth.py without missing
# cells: 4.03 M cells, 3.23 M for training), jeirt against the
# PyTorch reference layout (../shared/bench/peers/peer_jeirt_torch.py, per-pair
# batches of 512), on this machine, in one run.
#
#   scripts/bench_jeirt_epoch.sh [WORKDIR]        (default /tmp/jeirt-bench-embedllm)
#
# Needs Debian's python3-numpy and python3-torch for the peer (apt-get install -y
# python3-torch python3-numpy; run with /usr/bin/python3). Prints one line per
# measurement; peak memory is the maximum resident set size from /usr/bin/time -v.
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=${1:-/tmp/jeirt-bench-embedllm}
PEERS=../shared/bench/peers
PY=/usr/bin/python3
mkdir -p "$WORK"

if [ ! -f "$WORK/data/features.npy" ]; then
  echo "== generating data (gen_synth.py --gen jeirt --n 112 --j 36000 --d-in 384)"
  $PY $PEERS/gen_synth.py --out "$WORK/data" --gen jeirt --n 112 --j 36000 --d-in 384 --d-true 16 --seed 1
  # jeirt reads the features as precomputed vectors keyed by item id (0..J-1).
  $PY -c "import sys; open(sys.argv[1],'w').write(''.join(f'{j}\n' for j in range(36000)))" "$WORK/data/features.ids.txt"
fi

go build -o "$WORK/jeirt" ./cmd/jeirt
cat > "$WORK/bench.yaml" <<YAML
data: {responses: data/responses.csv, format: long}
split: {val: 0.1, test: 0.1, seed: 42, by: cell}
encoder: {spec: "precomputed:$WORK/data/features.npy"}
model: {dim: 256, hidden: 768, dropout: 0.5}
train: {epochs: 1, batch_size: 512, lr: 5.0e-5, weight_decay: 0.01, seed: 42, batching: by-question}
output: out
YAML

run_time() { # label, command...: prints seconds per epoch (from the tool) and peak RSS
  local label=$1; shift
  /usr/bin/time -v "$@" > "$WORK/$label.out" 2> "$WORK/$label.err" || { tail -20 "$WORK/$label.err"; exit 1; }
  local rss; rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$WORK/$label.err")
  echo "$label: peak RSS $((rss / 1024)) MiB"
}

for step in graph fused; do
  echo "== jeirt, by-question batches of 512, train.step=$step (one epoch through the CLI)"
  run_time jeirt-$step "$WORK/jeirt" train --config "$WORK/bench.yaml" --force --no-baselines --set train.step=$step
  grep -h '"seconds_per_epoch"' "$WORK/out/metrics.json" | sed "s/^ */jeirt-$step: /"
  grep -h '^epoch' "$WORK/jeirt-$step.err" | sed "s/^/jeirt-$step: /"
done

echo "== jeirt, graph and fused step, one epoch each in one process (Go benchmark, synth.Generate data of the same shape)"
go test -run '^$' -bench 'JEIRTEpochEmbedLLM' -benchtime 1x ./train/jeirt/ | grep Benchmark

echo "== jeirt, per-pair batches of 512: seconds per step (Go benchmark) x steps per epoch"
go test -run '^$' -bench 'JEIRTStep' -benchtime 10x ./train/jeirt/ | grep Benchmark | tee "$WORK/steps.txt"
cells=$($PY -c "import json,sys; print(json.load(open(sys.argv[1]))['n_obs'])" "$WORK/data/meta.json" 2>/dev/null || echo 4032000)
awk -v n=$(( (cells * 8 / 10 + 511) / 512 )) '/StepPerPair/ {printf "jeirt-per-pair %s: %.0f s/epoch (%d steps x %.3f s)\n", $1, n*$3/1e9, n, $3/1e9}' "$WORK/steps.txt"

echo "== PyTorch reference layout, per-pair batches of 512, pre-loaded tensors (one epoch)"
run_time torch-per-pair $PY $PEERS/peer_jeirt_torch.py "$WORK/data" --epochs 1 --batch 512 --hidden 768 --dim 256 \
  --lr 5e-5 --loader tensor --threads 2
tail -1 "$WORK/torch-per-pair.out" | sed 's/^/torch-per-pair: /'
