#!/usr/bin/env bash
# The one script to run on a GPU machine: the GPU backends against the CPU
# ones, then the figures, GPU and CPU in the same run. At most 8 minutes on a
# fresh machine, build included (stages that would run past the budget are
# skipped and say so). Build first, on any Linux machine with Go:
#
#   scripts/build-cuda.sh        # bin/jeirt-cuda (the runner), bin/jeirt, bin/cuda.test
#
# (run here when bin/ is missing and Go is installed), then from the
# repository root:
#
#   scripts/gpu-check.sh         # exits 1 on any failure
#
# Figures: device name; every kernel's agreement with the CPU (the CUDA test
# binary); the cBMM pass's bandwidth in GB/s and as a share of the device's
# peak (GPU_BANDWIDTH_TBS, default the H200's 4.8); cBMM fits at 112 x 36,000
# and 1,000 x 100,000, seconds to a relative loss gap of 1e-6 on cuda and cpu;
# 1,000 bootstrap replicates at 112 x 36,000; one JE-IRT epoch at EmbedLLM
# size on cuda and cpu; text encoder sentences/s (128 tokens) of MiniLM-,
# MPNet-base- and ModernBERT-large-sized models on cuda (batch 256; linear
# layers in fp32, tf32 and bf16) and cpu, dated. All figures also go to
# gpu-check.json in $OUT (or the current directory). Data come from ../shared/bench/peers/gen_synth.py when
# python3 and numpy are there, else from `jeirt synth`.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export PATH=$PATH:/usr/local/go/bin
budget=${GPU_CHECK_BUDGET_S:-470} # seconds, of the 8 minutes
bw_tbs=${GPU_BANDWIDTH_TBS:-4.8}
out=${OUT:-$PWD}
mkdir -p "$out"
json=$out/gpu-check.json
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
declare -A fig # figure name -> JSON value
note() { printf '\n== %s (%ds)\n' "$*" "$SECONDS"; }
left() { echo $((budget - SECONDS)); }
# have N: whether N seconds of the budget are left
have() { [ "$(left)" -ge "$1" ]; }
skip() { echo "skipped: $1 (budget)"; fig[$2]='"skipped"'; }

if [ ! -x bin/jeirt-cuda ] || [ ! -x bin/jeirt ] || [ ! -x bin/cuda.test ] || [ ! -x bin/transformer.test ]; then
	if command -v go >/dev/null; then
		note "build (scripts/build-cuda.sh)"
		bash scripts/build-cuda.sh || { echo "gpu-check: build failed" >&2; exit 1; }
	else
		echo "gpu-check: bin/ is incomplete and there is no Go here; run scripts/build-cuda.sh first" >&2
		exit 1
	fi
fi

note "device"
if command -v nvidia-smi >/dev/null; then
	nvidia-smi --query-gpu=name,memory.total,driver_version,compute_cap --format=csv,noheader || true
fi
dev=$(timeout 60 bin/jeirt-cuda device probe 2>&1)
rc=$?
echo "$dev"
if [ $rc -ne 0 ]; then
	echo "FAIL: bin/jeirt-cuda device probe" >&2
	exit 1
fi
fig[device]="\"$dev\""

note "CUDA tests: every kernel against the CPU (device, errors, sgemm, cBMM steps and fits, JE-IRT)"
log=$work/tests.log
(cd cuda && timeout 150 "$root/bin/cuda.test" -test.v -test.count 1 -test.timeout 145s -test.run 'Test' -test.skip 'Harness') >"$log" 2>&1
rc=$?
grep -E '^(--- |PASS|FAIL|ok|panic)' "$log" | cut -c1-220
if [ $rc -ne 0 ]; then
	echo "FAIL: CUDA tests (exit $rc)" >&2
	tail -40 "$log" >&2
	fail=1
	fig[tests]='"fail"'
else
	fig[tests]='"pass"'
fi

note "cBMM pass bandwidth: one rank-1 iteration over K copies of 112 x 36,054"
if have 60; then
	bench=$work/cbmm.bench
	(cd cuda && timeout 90 "$root/bin/cuda.test" -test.run '^$' -test.bench 'CBMMIteration' -test.benchtime 20x -test.timeout 85s) >"$bench" 2>&1 || fail=1
	grep '^Benchmark' "$bench"
	gbs=$(awk '/^BenchmarkCBMMIteration\/cuda\/K=64/ { for (i = 2; i < NF; i++) if ($(i+1) == "GB/s") print $i }' "$bench")
	if [ -n "$gbs" ]; then
		pct=$(awk -v g="$gbs" -v b="$bw_tbs" 'BEGIN { printf "%.1f", 100 * g / (b * 1000) }')
		echo "cBMM pass: $gbs GB/s, $pct% of $bw_tbs TB/s"
		fig[cbmm_pass_gbs]=$gbs
		fig[cbmm_pass_peak_pct]=$pct
	else
		fig[cbmm_pass_gbs]='"fail"'
		fail=1
	fi
else
	skip "cBMM bandwidth" cbmm_pass_gbs
fi

note "encoder throughput: MiniLM, MPNet-base and ModernBERT-large sized (random weights), 128 tokens; cuda at batch 256 in fp32, tf32 and bf16, cpu in the same run"
if have 120 && [ -x bin/transformer.test ]; then
	stamp=$(date -u +%Y-%m-%dT%H:%M:%SZ)
	# The fixtures through the reduced-precision forward (TestGPUEncoderPrecision,
	# run with the tests above): the GPU's own deviations from the references.
	grep -E 'max \|diff\| from the float64 reference' "$work/tests.log" | sed 's/^ *encoder_gpu_test.go:[0-9]*: /encoder precision on cuda: /'
	dp=$(sed -n 's/.*dense products: //p' "$work/tests.log" | head -1)
	echo "encoder dense products (fp32): ${dp:-?}"
	fig[encoder_dense_products]="\"${dp:-unknown}\""
	bench=$work/encoder-gpu.bench
	# About a minute expected (most of it making 530 M random weights on the
	# host); at most 180 s, and never past the budget less 30 s for the CPU.
	gt=$(($(left) - 30 < 180 ? $(left) - 30 : 180))
	(cd cuda && timeout "$gt" "$root/bin/cuda.test" -test.run '^$' -test.bench 'EncoderThroughput' -test.benchtime 3x -test.timeout "$((gt - 5))s" -test.v) >"$bench" 2>&1
	rc=$?
	grep -E '^(Benchmark|--- (SKIP|FAIL)|\s+encoder_gpu_test.go)' "$bench" | cut -c1-220
	if [ $rc -ne 0 ]; then
		echo "FAIL: encoder GPU benchmarks (exit $rc)" >&2
		tail -20 "$bench" >&2
		fail=1
	fi
	# The CPU forwards (package transformer's benchmarks) at batch 32: on the CPU
	# sentences/s hardly depend on the batch, and 256 ModernBERT-large texts
	# would take minutes. JEIRT_CPU_BATCH overrides the ModernBERT-large batch.
	# One level only: a pattern X/Y runs a benchmark without sub-benchmarks
	# (MPNetBase, ModernBERTLarge) but reports nothing for it. MiniLM runs at
	# batches 1, 8 and 32 (seconds); its batch-32 line is the figure.
	cbench=$work/encoder-cpu.bench
	ct=$(($(left) > 200 ? 200 : $(left)))
	if [ "$ct" -ge 20 ]; then
		(cd encoder/transformer && JEIRT_BENCH_BATCH=${JEIRT_CPU_BATCH:-32} timeout "$ct" "$root/bin/transformer.test" -test.run '^$' \
			-test.bench '^Benchmark(BERTMiniLM|MPNetBase|ModernBERTLarge)$' -test.benchtime 1x -test.timeout 0) >"$cbench" 2>&1 || echo "encoder CPU benchmarks: cut short by the budget (${ct} s)"
	else
		echo "encoder CPU benchmarks: skipped (budget)" >"$cbench"
		cat "$cbench"
	fi
	grep '^Benchmark' "$cbench"
	# sps FILE PATTERN: the sentences/s of the first benchmark line matching PATTERN.
	sps() { awk -v p="$2" '$1 ~ p { for (i = 2; i < NF; i++) if ($(i+1) == "sentences/s") { print $i; exit } }' "$1"; }
	for m in "minilm MiniLM BERTMiniLM/batch=32" "mpnet_base MPNetBase MPNetBase" "modernbert_large ModernBERTLarge ModernBERTLarge"; do
		# shellcheck disable=SC2086 # three words
		set -- $m
		for p in fp32 tf32 bf16; do
			g=$(sps "$bench" "^BenchmarkEncoderThroughput/$2/$p")
			fig[encoder_${1}_cuda_${p}_sps]=${g:-null}
			if [ -n "$g" ]; then
				echo "$stamp encoder $1 $p: $g sentences/s on cuda (batch 256, 128 tokens)"
			elif [ $p != fp32 ] && grep -A1 -- "--- SKIP: BenchmarkEncoderThroughput/$2/$p" "$bench" | grep -q "no cuBLAS"; then
				# tf32 and bf16 need libcublas, which the driver alone lacks.
				echo "$stamp encoder $1 $p: not measured, no cuBLAS on this machine"
			else
				echo "FAIL: no $p figure for $1 on cuda" >&2
				fail=1
			fi
		done
		c=$(sps "$cbench" "^Benchmark$3")
		echo "$stamp encoder $1: ${c:-?} sentences/s on cpu (batch ${JEIRT_CPU_BATCH:-32} for ModernBERT-large, 32 otherwise)"
		fig[encoder_${1}_cpu_sps]=${c:-null}
	done
	fig[encoder_date]="\"$stamp\""
else
	skip "encoder throughput" encoder_minilm_cuda_fp32_sps
fi

# gen NAME MODELS ITEMS: a 2PL response file, all cells observed.
gen() {
	local d=$work/$1
	if python3 -c 'import numpy' 2>/dev/null && [ -f ../shared/bench/peers/gen_synth.py ]; then
		python3 ../shared/bench/peers/gen_synth.py --out "$d" --gen 2pl --n "$2" --j "$3" --missing 0.0 --seed 1 >/dev/null || return 1
	else
		bin/jeirt synth --kind 2pl --models "$2" --items "$3" --seed 1 --out "$d" >/dev/null || return 1
	fi
	echo "$d/responses.csv"
}

# gap SECONDS_LOSS_CSV: seconds until the loss is within 1e-6 relative of the
# lowest loss the run reached.
gap() {
	awk -F, 'NR > 1 { s[NR] = $(NF-1); l[NR] = $NF; if (min == "" || $NF < min) min = $NF; n = NR }
		END { for (i = 2; i <= n; i++) if ((l[i] - min) / min <= 1e-6) { printf "%.3f", s[i]; exit } }' "$1"
}

# fit NAME DATA DEVICE TIMEOUT [ARGS...]: an irt fit to the 1e-6 gap, figures into fig.
fit() {
	local name=$1 data=$2 device=$3 t=$4
	shift 4
	local o=$work/fit-$name-$device
	if ! timeout "$t" bin/jeirt irt fit --data "$data" --device "$device" --tol 1e-12 --max-iter 1000 \
		--trace "$o.trace.csv" --out "$o" "$@" >"$o.log" 2>&1; then
		echo "FAIL: irt fit $name on $device" >&2
		tail -5 "$o.log" >&2
		fig[${name}_${device}_s]='"fail"'
		fail=1
		return
	fi
	local s
	s=$(gap "$o.trace.csv")
	echo "$name on $device: ${s:-?} s to a relative loss gap of 1e-6"
	fig[${name}_${device}_gap_s]=${s:-null}
}

note "cBMM fit, 112 x 36,000, cuda and cpu"
if have 60 && d112=$(gen small 112 36000); then
	fit cbmm_112x36000 "$d112" cuda 60
	fit cbmm_112x36000 "$d112" cpu 90
else
	skip "112 x 36,000" cbmm_112x36000
fi

note "bootstrap: 1,000 replicates at 112 x 36,000 on cuda (100 on cpu for the rate)"
if have 90 && [ -n "${d112:-}" ]; then
	for c in "cuda 1000 120" "cpu 100 90"; do
		set -- $c
		o=$work/boot-$1
		if timeout "$3" bin/jeirt irt fit --data "$d112" --device "$1" --bootstrap "$2" --out "$o" >"$o.log" 2>&1; then
			s=$(sed -n 's/.*"bootstrap_seconds": *\([0-9.e+-]*\).*/\1/p' "$o/fit.json" | head -1)
			echo "bootstrap on $1: $2 replicates in ${s:-?} s"
			fig[bootstrap_${1}_replicates]=$2
			fig[bootstrap_${1}_s]=${s:-null}
		else
			echo "FAIL: bootstrap on $1" >&2
			tail -5 "$o.log" >&2
			fig[bootstrap_${1}_s]='"fail"'
			fail=1
		fi
	done
else
	skip "bootstrap" bootstrap_cuda_s
fi

note "JE-IRT: one epoch at EmbedLLM size (112 x 36,054, 768-d inputs, d 256), cuda and cpu"
if have 120; then
	bench=$work/jeirt.bench
	(cd cuda && timeout 200 "$root/bin/cuda.test" -test.run '^$' -test.bench 'JEIRTEpoch' -test.benchtime 1x -test.timeout 195s) >"$bench" 2>&1 || fail=1
	grep '^Benchmark' "$bench"
	for d in cuda cpu; do
		s=$(awk -v d="$d" '$1 ~ "^BenchmarkJEIRTEpoch/" d { for (i = 2; i < NF; i++) if ($(i+1) == "s/epoch") print $i }' "$bench")
		fig[jeirt_epoch_${d}_s]=${s:-null}
		echo "JE-IRT epoch on $d: ${s:-?} s"
	done
else
	skip "JE-IRT epoch" jeirt_epoch_cuda_s
fi

note "cBMM fit, 1,000 x 100,000, cuda and cpu"
if have 150 && dbig=$(gen big 1000 100000); then
	fit cbmm_1000x100000 "$dbig" cuda "$(($(left) / 3))"
	fit cbmm_1000x100000 "$dbig" cpu "$(($(left) - 5))"
else
	skip "1,000 x 100,000" cbmm_1000x100000
fi

{
	printf '{\n  "date": "%s",\n  "seconds": %d' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$SECONDS"
	for k in "${!fig[@]}"; do printf ',\n  "%s": %s' "$k" "${fig[$k]}"; done
	printf '\n}\n'
} >"$json"
echo "figures: $json"

if [ $fail -ne 0 ]; then
	note "gpu-check: FAILED"
	exit 1
fi
note "gpu-check: all passed"
