#!/bin/sh
# Encoder throughput on this machine, all in one run so the figures share its load:
# the hash encoder, the MiniLM-sized BERT graph on Gorgonia's default pure-Go BLAS
# (gonum) and on OpenBLAS (-tags openblas; needs libopenblas-dev), and the same
# forward in PyTorch (Debian python3-torch).
#   scripts/bench-encoder.sh [benchtime, default 3x]
set -e
cd "$(dirname "$0")/.."
bt=${1:-3x}
echo "== $(date -u +%FT%TZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
go test -run '^$' -bench 'HashEncoder' -benchtime "$bt" ./encoder/ | grep Benchmark
echo "== gorgonia + gonum BLAS (default build)"
go test -run '^$' -bench 'BERTMiniLM' -benchtime "$bt" ./encoder/ | grep Benchmark
if [ -e /usr/include/x86_64-linux-gnu/cblas.h ] || [ -e /usr/include/cblas.h ]; then
	echo "== gorgonia + OpenBLAS (-tags openblas)"
	go test -tags openblas -run '^$' -bench 'BERTMiniLM' -benchtime "$bt" ./encoder/ | grep Benchmark
fi
if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
	echo "== PyTorch"
	/usr/bin/python3 scripts/bench_bert_torch.py --threads 2 --seconds 10
fi
