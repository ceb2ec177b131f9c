#!/bin/sh
# bench-cpu.sh: jeirt's CPU paths against their peers, all in one run so that the
# figures share the machine's state. It records the CPU model, its vector features, the
# load average before and after, and an estimate of the FP32 peak (cores x FMA units x
# lanes x 2 x the clock measured while busy), then one section per path, each adding
# rows to the table printed at the end:
#
#   sgemm    model/simd's SGEMM (all cores) at the encoders' layer shapes, at each
#            vector level this CPU has, with the weights packed at load and not in cache
#            (as the BERT encoder runs them) and packed at every call, and Gonum's
#            (MiniLM shapes): GFLOP/s and % of the estimated peak of that level
#   encoder  MiniLM-sized BERT at batch 32 and 1, MPNet-base, ModernBERT-base (batch
#            32) and ModernBERT-large (batch JEIRT_BENCH_LARGE_BATCH, default 8):
#            random weights, 128 tokens, the default build; against the same forwards
#            in PyTorch (scripts/bench_bert_torch.py, Debian's python3-torch); the
#            MiniLM rows again with -tags openblas when libopenblas-dev is installed; and
#            the MiniLM forwards' Linear products, each shape timed inside the forwards
#   cbmm     cBMM to a 1e-6 loss gap at 112 x 36,000 (scripts/bench-cbmm.sh): jeirt against
#            numpy cBMM and scipy L-BFGS-B, and the cells per second of its iterations
#   jeirt    one JE-IRT epoch at the EmbedLLM size by question, no dropout
#            (scripts/bench_jeirt_epoch.sh): the graph and the fused step against the
#            PyTorch peer with the same batching, pairs per second and validation accuracy
#
#   scripts/bench-cpu.sh [benchtime, default 3x]
#
# JEIRT_BENCH_SECTIONS picks sections (default "sgemm encoder cbmm jeirt");
# JEIRT_BENCH_SGEMM_TIME is each SGEMM case's time (default 0.3s), JEIRT_BENCH_B1_TIME the
# batch-1 forwards' (default 3s; the other forwards run benchtime times);
# JEIRT_BENCH_TORCH_SECONDS is PyTorch's minimum time per case (default 10).
# The peak is an estimate: the FMA units per core are inferred from the vendor and
# family (two, except one 512-bit unit on Zen 4), the clock from a chain of dependent adds.
set -e
cd "$(dirname "$0")/.."
bt=${1:-3x}
sections=${JEIRT_BENCH_SECTIONS:-sgemm encoder cbmm jeirt}
large_batch=${JEIRT_BENCH_LARGE_BATCH:-8}
b1_time=${JEIRT_BENCH_B1_TIME:-3s}
torch_seconds=${JEIRT_BENCH_TORCH_SECONDS:-10}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rows="$tmp/rows" # path|case|jeirt|GFLOP/s|GFLOP/cpu-s|peak it is measured against (top, avx2, none)|peer|ratio
: >"$rows"

cores=$(nproc)
model=$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
vendor=$(grep -m1 '^vendor_id' /proc/cpuinfo | cut -d: -f2 | tr -d ' ')
family=$(grep -m1 '^cpu family' /proc/cpuinfo | cut -d: -f2 | tr -d ' ')
mhz=$(grep -m1 '^cpu MHz' /proc/cpuinfo | cut -d: -f2 | tr -d ' ')
flags=$(grep -m1 '^flags' /proc/cpuinfo)
has() { case " $flags " in *" $1 "*) return 0 ;; esac; return 1; }
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
echo "== $(date -u +%FT%TZ) $model ($vendor family $family), $cores cores, cpu MHz $mhz"
echo "== load average before: $load_before"
echo "== $(go version)"

go test -c -o "$tmp/simd.test" ./model/simd/
go test -c -o "$tmp/transformer.test" ./encoder/transformer/

# The clock of the cores all busy at once and their FMA roof, best of many short runs;
# taken before the sections and again after them, the better of the two kept.
probe() {
	(cd model/simd && "$tmp/simd.test" -test.run '^$' -test.bench 'Peak' -test.benchtime 300x -test.count 8) >>"$tmp/peak.txt"
}
best() { grep "$1" "$tmp/peak.txt" | awk -v u="$2" '{for (i = 1; i < NF; i++) if ($(i+1) == u && $i > m) m = $i} END {print m + 0}'; }
lanes=0
units=2
level=go
if has avx512f && has avx512dq; then
	lanes=16
	level=avx512
	# Zen 4 (AMD family 25) runs 512-bit FMAs on its two 256-bit units: one per cycle.
	if [ "$vendor" = AuthenticAMD ] && [ "$family" -le 25 ]; then units=1; fi
elif has avx2 && has fma; then
	lanes=8
	level=avx2
fi
peak() { awk -v c="$cores" -v u="$1" -v l="$2" -v g="$ghz" 'BEGIN {printf "%.0f", c * u * l * 2 * g}'; }
settle_peak() {
	ghz=$(best 'Peak/clock' GHz)
	peak_top=$(peak $units $lanes)
	peak_avx2=$(peak 2 8)
}
probe
settle_peak
echo "== clock with all cores busy (64 dependent adds = 64 cycles): $ghz GHz; vector level $level; estimated peak $peak_top GFLOP/s"

# value UNIT LINE: the number before UNIT in a benchmark line.
value() { echo "$2" | awk -v u="$1" '{for (i = 1; i < NF; i++) if ($(i+1) == u) {print $i; exit}}'; }
pct() { awk -v g="$1" -v p="$2" 'BEGIN {if (p > 0) printf "%.0f%%", 100 * g / p}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0) printf "%.2fx", a / b}'; }

section_sgemm() {
	# Time-based, not a count: a 128-row product takes about 0.1 ms, and five calls
	# measure mostly the first ones (workers waking, buffers allocated).
	echo "== sgemm: Linear (x·Wᵀ + b) at the encoders' shapes, all cores; SHAPE/LEVEL with the"
	echo "   weights packed at load (as the BERT encoder) and not in cache, /pack-per-call packing W every call"
	(cd model/simd && "$tmp/simd.test" -test.run '^$' -test.bench 'Sgemm/.*/(avx2|avx512)(/pack-per-call)?$|Sgemm/MiniLM.*/gonum$' -test.benchtime "${JEIRT_BENCH_SGEMM_TIME:-0.3s}") | grep '^BenchmarkSgemm' | tee "$tmp/sgemm.txt"
	while read -r line; do
		name=$(echo "$line" | awk '{print $1}' | sed 's/^BenchmarkSgemm\///; s/-[0-9]*$//')
		g=$(value GFLOP/s "$line")
		c=$(value GFLOP/cpu-s "$line")
		p=top
		case $name in */avx2 | */avx2/*) p=avx2 ;; */gonum | */go | */go/*) p="" ;; esac
		echo "sgemm|$name|$g GFLOP/s|$g|$c|$p||" >>"$rows"
	done <"$tmp/sgemm.txt"
}

section_encoder() {
	echo "== encoder: default build (model/simd at $level)"
	# Batch 1 for a time rather than a count: a forward takes about 7 ms.
	(cd encoder/transformer && "$tmp/transformer.test" -test.run '^$' -test.bench 'BERTMiniLM/batch=32$|MPNetBase|ModernBERTBase' -test.benchtime "$bt" -test.timeout 0) | grep '^Benchmark' | tee "$tmp/enc.txt"
	(cd encoder/transformer && "$tmp/transformer.test" -test.run '^$' -test.bench 'BERTMiniLM/batch=1$' -test.benchtime "$b1_time" -test.timeout 0) | grep '^Benchmark' | tee -a "$tmp/enc.txt"
	(cd encoder/transformer && JEIRT_BENCH_BATCH=$large_batch "$tmp/transformer.test" -test.run '^$' -test.bench 'ModernBERTLarge' -test.benchtime 1x -test.timeout 0) | grep '^Benchmark' | tee -a "$tmp/enc.txt"
	: >"$tmp/openblas.txt"
	if [ -e /usr/include/x86_64-linux-gnu/cblas.h ] || [ -e /usr/include/cblas.h ]; then
		echo "== the same MiniLM-sized BERT with -tags openblas (products on OpenBLAS)"
		go test -c -tags openblas -o "$tmp/transformer-openblas.test" ./encoder/transformer/
		(cd encoder/transformer && "$tmp/transformer-openblas.test" -test.run '^$' -test.bench 'BERTMiniLM/batch=32$' -test.benchtime "$bt" -test.timeout 0) | grep '^Benchmark' | tee "$tmp/openblas.txt"
		(cd encoder/transformer && "$tmp/transformer-openblas.test" -test.run '^$' -test.bench 'BERTMiniLM/batch=1$' -test.benchtime "$b1_time" -test.timeout 0) | grep '^Benchmark' | tee -a "$tmp/openblas.txt"
	fi
	torch=""
	if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
		torch=1
		echo "== PyTorch, $cores threads"
		for m in "minilm 32,1" "mpnet-base 32" "modernbert-base 32" "modernbert-large $large_batch"; do
			set -- $m
			/usr/bin/python3 scripts/bench_bert_torch.py --threads "$cores" --model "$1" --batches "$2" --seconds "$torch_seconds" | grep '^torch .*batch=' | tee -a "$tmp/torch.txt"
		done
	else
		echo "== PyTorch: not installed here (apt-get install python3-torch), no comparison"
	fi
	for c in "BERTMiniLM/batch=32 minilm 32 MiniLM-sized-BERT" "BERTMiniLM/batch=1 minilm 1 MiniLM-sized-BERT" \
		"MPNetBase mpnet-base 32 MPNet-base" "ModernBERTBase modernbert-base 32 ModernBERT-base" \
		"ModernBERTLarge modernbert-large $large_batch ModernBERT-large"; do
		set -- $c
		line=$(grep "^Benchmark$1[-[:space:]]" "$tmp/enc.txt" | head -1)
		sps=$(value sentences/s "$line")
		g=$(value GFLOP/s "$line")
		c=$(value GFLOP/cpu-s "$line")
		t=""
		tc=""
		if [ -n "$torch" ]; then
			tline=$(grep "^torch $2 batch=$3:" "$tmp/torch.txt")
			t=$(echo "$tline" | awk '{print $4}')
			tc=$(value GFLOP/cpu-s "$tline")
		fi
		echo "encoder|$4 batch $3|$sps sentences/s|$g|$c${tc:+ (peer $tc)}|top|${t:+$t sentences/s}|$(ratio "$sps" "$t")" >>"$rows"
		oline=$(grep "^Benchmark$1[-[:space:]]" "$tmp/openblas.txt" | head -1)
		if [ -n "$oline" ]; then
			osps=$(value sentences/s "$oline")
			echo "encoder|$4 batch $3, -tags openblas|$osps sentences/s|$(value GFLOP/s "$oline")|$(value GFLOP/cpu-s "$oline")|top|${t:+$t sentences/s}|$(ratio "$osps" "$t")" >>"$rows"
		fi
	done
	# The MiniLM-sized forwards' Linear products, each shape timed inside the forwards
	# (BenchmarkBERTMiniLM's INxOUT-GFLOP/s): where a forward leaves their operands.
	for n in 32 1; do
		line=$(grep "^BenchmarkBERTMiniLM/batch=$n[-[:space:]]" "$tmp/enc.txt" | head -1)
		for u in $(echo "$line" | tr -s ' \t' '\n\n' | grep -- '-GFLOP/s$'); do
			g=$(value "$u" "$line")
			echo "encoder|MiniLM-sized-BERT batch $n, its ${u%-GFLOP/s} products inside the forward|$g GFLOP/s|$g||top||" >>"$rows"
		done
	done
}

# cBMM to a 1e-6 loss gap at 112 x 36,000 (scripts/bench-cbmm.sh: jeirt, numpy cBMM and
# scipy L-BFGS-B in one run), with the cell rate of jeirt's iterations.
section_cbmm() {
	echo "== cbmm: 2PL to a 1e-6 gap, 112 x 36,000, 10% missing (scripts/bench-cbmm.sh)"
	scripts/bench-cbmm.sh "$tmp/cbmm" 2>&1 | tee "$tmp/cbmm.txt"
	gap() { awk -F'|' -v m="$1" '{gsub(/ /, "", $2)} $2 == m {gsub(/ /, "", $4); print $4}' "$tmp/cbmm.txt"; }
	iters() { awk -F'|' -v m="$1" '{gsub(/ /, "", $2)} $2 == m {gsub(/ /, "", $3); print $3}' "$tmp/cbmm.txt"; }
	j=$(gap cbmm-accel)
	np=$(gap mm-numpy)
	sp=$(gap lbfgs-scipy)
	# The plain MM run's cell rate: observed cells x iterations / its seconds to the gap.
	cells=$(awk -F, 'NR > 1 {n++} END {print n + 0}' "$tmp/cbmm/data/responses.csv")
	rate=$(awk -v c="$cells" -v i="$(iters cbmm)" -v s="$(gap cbmm)" 'BEGIN {if (s > 0) printf "%.0f M cells/s", c * i / s / 1e6}')
	echo "cbmm|112 x 36,000 to a 1e-6 gap, vs numpy cBMM ($rate)|$j s||||$np s|$(ratio "$np" "$j")" >>"$rows"
	echo "cbmm|112 x 36,000 to a 1e-6 gap, vs scipy L-BFGS-B|$j s||||$sp s|$(ratio "$sp" "$j")" >>"$rows"
}

# One JE-IRT epoch at the EmbedLLM size by question, no dropout (scripts/bench_jeirt_epoch.sh:
# the default graph step and the fused one through jeirt train, then the PyTorch peer with
# the same batching), in pairs per second; the GFLOP/s are the adapter's products alone
# (forward and the two backward products: 6·D·H + 6·H·d flops per question of the epoch).
section_jeirt() {
	echo "== jeirt: one epoch at the EmbedLLM size, by question (scripts/bench_jeirt_epoch.sh)"
	scripts/bench_jeirt_epoch.sh "${JEIRT_BENCH_JEIRT_WORK:-/tmp/jeirt-bench-embedllm}" 2>&1 | tee "$tmp/jeirt.txt"
	line=$(grep '^summary:' "$tmp/jeirt.txt")
	field() { echo "$line" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
	pairs=$(field pairs)
	t=$(field torch_s)
	tp=$(awk -v p="$pairs" -v s="$t" 'BEGIN {printf "%.0f", p / s}')
	gflop=$(awk 'BEGIN {print 6 * 36000 * (384 * 768 + 768 * 256) / 1e9}')
	for step in graph fused; do
		s=$(field "${step}_s")
		p=$(awk -v p="$pairs" -v s="$s" 'BEGIN {printf "%.0f", p / s}')
		g=$(awk -v f="$gflop" -v s="$s" 'BEGIN {printf "%.1f", f / s}')
		name="epoch, EmbedLLM size, by question, $step step (val acc $(field "${step}_acc"), peer $(field torch_acc))"
		echo "jeirt|$name|$p pairs/s|$g||top|$tp pairs/s|$(ratio "$t" "$s")" >>"$rows"
	done
	echo "jeirt|graph step's epoch / fused step's|$(awk -v g="$(field graph_s)" -v f="$(field fused_s)" 'BEGIN {printf "%.3f", g / f}')||||||" >>"$rows"
}

for section in $sections; do
	"section_$section"
	echo "== load average after $section: $(cut -d' ' -f1-3 /proc/loadavg)"
done

probe
settle_peak
echo
echo "$model ($vendor family $family), $cores cores, vector level $level"
echo "clock with all cores busy: $ghz GHz (best of the probes before and after); cpu MHz $mhz"
echo "estimated FP32 peak: $cores cores x $units FMA units x $lanes lanes x 2 flops x $ghz GHz = $peak_top GFLOP/s (AVX2: $peak_avx2)"
for l in avx2 avx512; do
	r=$(best "Peak/fma/$l" GFLOP/s)
	[ "$r" = 0 ] || echo "measured FMA loop, all cores, $l: $r GFLOP/s"
done
echo "load average before $load_before, after $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| path | case | jeirt | GFLOP/s | GFLOP per CPU-s | % of est. peak | peer, same run | ratio |"
echo "|---|---|---:|---:|---:|---:|---:|---:|"
while IFS='|' read -r path case jeirt g c class peer r; do
	p=""
	case $class in top) p=$(pct "$g" "$peak_top") ;; avx2) p=$(pct "$g" "$peak_avx2") ;; esac
	echo "| $path | $case | $jeirt | $g | $c | $p | $peer | $r |"
done <"$rows"
