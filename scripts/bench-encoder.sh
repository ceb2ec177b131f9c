#!/bin/sh
# Encoder throughput on this machine, all in one run so the figures share its load:
# the hash encoder; the MiniLM-sized BERT graph, MPNet-base and ModernBERT-base sized
# forwards (random weights, batch 32, 128 tokens) on the default build's model/simd
# and on OpenBLAS (-tags openblas; needs libopenblas-dev); the peak resident
# memory of a ModernBERT-large sized model (28 layers, hidden 1024) encoding
# (JEIRT_BENCH_BATCH texts of 128 tokens, default 32); and the MiniLM forward in
# PyTorch (Debian python3-torch) when it is installed.
#   scripts/bench-encoder.sh [benchtime, default 3x]
set -e
cd "$(dirname "$0")/.."
bt=${1:-3x}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "== $(date -u +%FT%TZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
go test -c -o "$tmp/encoder.test" ./encoder/
go test -c -o "$tmp/transformer.test" ./encoder/transformer/
(cd encoder && "$tmp/encoder.test" -test.run '^$' -test.bench 'HashEncoder' -test.benchtime "$bt" | grep Benchmark)
echo "== model/simd (default build)"
(cd encoder/transformer && "$tmp/transformer.test" -test.run '^$' -test.bench 'BERTMiniLM|MPNetBase|ModernBERTBase' -test.benchtime "$bt" -test.timeout 0 | grep Benchmark)
if [ -e /usr/include/x86_64-linux-gnu/cblas.h ] || [ -e /usr/include/cblas.h ]; then
	echo "== OpenBLAS (-tags openblas)"
	go test -c -tags openblas -o "$tmp/transformer-openblas.test" ./encoder/transformer/
	(cd encoder/transformer && "$tmp/transformer-openblas.test" -test.run '^$' -test.bench 'BERTMiniLM|MPNetBase|ModernBERTBase' -test.benchtime "$bt" -test.timeout 0 | grep Benchmark)
fi
echo "== ModernBERT-large sized, peak RSS (batch ${JEIRT_BENCH_BATCH:-32})"
(cd encoder/transformer && /usr/bin/time -v "$tmp/transformer.test" -test.run '^$' -test.bench 'ModernBERTLarge' -test.benchtime 1x -test.timeout 0 2>"$tmp/time.txt" | grep Benchmark)
grep -E 'Maximum resident|Elapsed' "$tmp/time.txt"
if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
	echo "== PyTorch"
	/usr/bin/python3 scripts/bench_bert_torch.py --threads 2 --seconds 10
else
	echo "== PyTorch: not installed here, no comparison"
fi
