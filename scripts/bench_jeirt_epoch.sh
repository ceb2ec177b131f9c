#!/usr/bin/env bash
# One JE-IRT training epoch on EmbedLLM-sized synthetic data (112 models x 36,000
# questions, D = 384 features, d = 256, hidden 768, no dropout; gen_synth.py without
# missing cells: 4.03 M cells, 3.23 M for training), jeirt's two CPU steps through
# `jeirt train` against the PyTorch peer (../shared/bench/peers/peer_jeirt_torch.py) with
# the same batching (by question, batches of at most 512 pairs) and learning rate, back
# to back in one run (each step JEIRT_BENCH_ROUNDS times, default 5, alternating; the
# median epoch counts), with the validation accuracy after the epoch of each.
#
#   scripts/bench_jeirt_epoch.sh [WORKDIR]        (default /tmp/jeirt-bench-embedllm)
#
# JEIRT_BENCH_PER_PAIR=1 also runs the peer with the reference's per-pair batches and
# the in-process Go benchmarks. Needs Debian's python3-numpy and python3-torch for the
# peer (apt-get install -y python3-torch python3-numpy; run with /usr/bin/python3).
# Prints one line per measurement (peak memory is the maximum resident set size from
# /usr/bin/time -v), the load average before and after each run, and a last line
# "summary: ..." with the seconds per epoch and accuracies (scripts/bench-cpu.sh reads it).
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=${1:-/tmp/jeirt-bench-embedllm}
PEERS=$(pwd)/../shared/bench/peers # absolute: run_time runs in $WORK
PY=/usr/bin/python3
mkdir -p "$WORK"

if [ ! -f "$WORK/data/features.npy" ]; then
  echo "== generating data (gen_synth.py --gen jeirt --n 112 --j 36000 --d-in 384)"
  $PY $PEERS/gen_synth.py --out "$WORK/data" --gen jeirt --n 112 --j 36000 --d-in 384 --d-true 16 --seed 1
fi
if [ ! -f "$WORK/data/features.ids.txt" ]; then
  # jeirt reads the features as precomputed vectors keyed by item id (0..J-1).
  $PY -c "import sys; open(sys.argv[1],'w').write(''.join(f'{j}\n' for j in range(36000)))" "$WORK/data/features.ids.txt"
fi

go build -o "$WORK/jeirt" ./cmd/jeirt
cat > "$WORK/bench.yaml" <<YAML
data: {responses: data/responses.csv, format: long}
split: {val: 0.1, test: 0.1, seed: 42, by: cell}
encoder: {spec: "precomputed:$WORK/data/features.npy"}
model: {dim: 256, hidden: 768, dropout: 0}
train: {epochs: 1, batch_size: 512, lr: 5.0e-5, weight_decay: 0.01, seed: 42, batching: by-question}
output: out
YAML

load() { cut -d' ' -f1 /proc/loadavg; }
run_time() { # label, command...: prints peak RSS and the load average before and after
  local label=$1; shift
  local before; before=$(load)
  (cd "$WORK" && /usr/bin/time -v "$@" > "$WORK/$label.out" 2> "$WORK/$label.err") || { tail -20 "$WORK/$label.err"; exit 1; }
  local rss; rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$WORK/$label.err")
  echo "$label: peak RSS $((rss / 1024)) MiB, load average $before before, $(load) after"
}
json() { $PY -c "import json,sys; d=json.load(open(sys.argv[1])); print(d$2)" "$1"; }

# Each step runs ROUNDS times, alternating (graph, fused, graph, ...), and its
# figure is the median: on this 2-core VM about one epoch in five takes 1.5x
# the others, whichever the step, so one epoch each compares noise.
ROUNDS=${JEIRT_BENCH_ROUNDS:-5}
declare -A secs acc all
for round in $(seq "$ROUNDS"); do
  for device in cpu cpu:fused; do
    step=graph
    [ "$device" = cpu:fused ] && step=fused
    echo "== jeirt, train.device=$device (the $step step), one epoch through jeirt train, round $round of $ROUNDS"
    run_time "jeirt-$step" "$WORK/jeirt" train --config "$WORK/bench.yaml" --force --no-baselines --set "train.device=$device"
    s=$(json "$WORK/out/metrics.json" "['seconds_per_epoch']")
    all[$step]="${all[$step]:-} $s"
    acc[$step]=$(json "$WORK/out/metrics.json" "['history'][-1]['val_acc']")
    grep -h '^epoch' "$WORK/jeirt-$step.err" | sed "s/^/jeirt-$step: /"
    echo "jeirt-$step: $s s per epoch, validation accuracy ${acc[$step]}"
  done
done
median() { tr ' ' '\n' | grep . | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
for step in graph fused; do
  secs[$step]=$(echo "${all[$step]}" | median)
  echo "jeirt-$step: median ${secs[$step]} s per epoch over $ROUNDS rounds (${all[$step]# })"
done

echo "== PyTorch peer, by-question batches of 512, pre-loaded tensors (one epoch)"
run_time torch-by-question $PY $PEERS/peer_jeirt_torch.py "$WORK/data" --epochs 1 --batch 512 --hidden 768 --dim 256 \
  --lr 5e-5 --loader tensor --batching by-question --threads "$(nproc)"
tail -1 "$WORK/torch-by-question.out" | sed 's/^/torch-by-question: /'
tsecs=$(tail -1 "$WORK/torch-by-question.out" | $PY -c "import json,sys; print(json.loads(sys.stdin.read())['sec_per_epoch'])")
tacc=$(tail -1 "$WORK/torch-by-question.out" | $PY -c "import json,sys; print(json.loads(sys.stdin.read())['val_acc'])")
cells=$(json "$WORK/data/meta.json" "['n_obs']")
awk -v g="${secs[graph]}" -v f="${secs[fused]}" -v t="$tsecs" -v c="$cells" 'BEGIN {
  n = int(c * 0.8)
  printf "pairs/s: jeirt graph %.0f, jeirt fused %.0f, torch by-question %.0f\n", n / g, n / f, n / t
  printf "ratios: graph %.2fx the peer, fused %.2fx the peer; graph/fused %.3f\n", t / g, t / f, g / f
}'

if [ "${JEIRT_BENCH_PER_PAIR:-0}" = 1 ]; then
  echo "== jeirt, graph and fused step, one epoch each in one process (Go benchmark, synth.Generate data of the same shape)"
  go test -run '^$' -bench 'JEIRTEpochEmbedLLM|JEIRTGraphOverFused' -benchtime 1x ./train/jeirt/ | grep Benchmark
  echo "== jeirt, per-pair batches of 512: seconds per step (Go benchmark) x steps per epoch"
  go test -run '^$' -bench 'JEIRTStep' -benchtime 10x ./train/jeirt/ | grep Benchmark | tee "$WORK/steps.txt"
  awk -v n=$(( (cells * 8 / 10 + 511) / 512 )) '/StepPerPair/ {printf "jeirt-per-pair %s: %.0f s/epoch (%d steps x %.3f s)\n", $1, n*$3/1e9, n, $3/1e9}' "$WORK/steps.txt"
  echo "== PyTorch reference layout, per-pair batches of 512, pre-loaded tensors (one epoch)"
  run_time torch-per-pair $PY $PEERS/peer_jeirt_torch.py "$WORK/data" --epochs 1 --batch 512 --hidden 768 --dim 256 \
    --lr 5e-5 --loader tensor --threads "$(nproc)"
  tail -1 "$WORK/torch-per-pair.out" | sed 's/^/torch-per-pair: /'
fi
echo "summary: pairs=$((cells * 8 / 10)) graph_s=${secs[graph]} fused_s=${secs[fused]} torch_s=$tsecs graph_acc=${acc[graph]} fused_acc=${acc[fused]} torch_acc=$tacc"
