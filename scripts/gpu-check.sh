#!/usr/bin/env bash
# The GPU check: every kernel against the CPU, then the figures no one has
# measured yet, with PyTorch on the same GPU in the same run. It runs from the
# bundle that scripts/gpu-bundle.sh builds (gpu-bundle/: this script, the
# stripped binaries, the fixtures, the peers), with no Go and no network:
#
#   bash gpu-bundle/gpu-check.sh      # on the GPU machine (docs/gpu.md has the command to paste)
#   scripts/gpu-check.sh              # from a checkout with Go: builds the bundle first, then runs it
#
# It unpacks the bundle into a temporary folder under /tmp, checks that every
# file it needs is there and intact, probes the device (no CUDA device: one
# line saying so, exit 3), then runs, in order of value, each stage with its
# own timeout inside a budget of GPU_CHECK_BUDGET_S seconds (default 470, of
# the 8 minutes; a stage that would not fit is skipped and says so):
#
#   1. correctness: the CUDA test binary (every kernel against the CPU, the
#      fixtures through the GPU encoder, which libcublas loaded and its version)
#   2. cBMM pass bandwidth (GB/s, share of GPU_BANDWIDTH_TBS, default 4.8)
#   3. one JE-IRT epoch at EmbedLLM size: jeirt train --device cuda, and
#      peer_jeirt_torch.py's model (by-question batches) on cuda, same data
#   4. encoder sentences/s, 128 tokens, batch 256, fp32 / tf32 / bf16: jeirt's
#      GPU forward, and transformers' AutoModel.from_config of the same sizes
#   5. a 2PL fit of 1,000 x 100,000 (90 M observed cells) to a 1e-6 relative
#      loss gap: jeirt irt fit --device cuda, and peer_2pl_torch.py's Adam on
#      cuda, on the same cells
#   6. then, while the budget lasts: the fit at 112 x 36,000 (both), 1,000
#      bootstrap replicates on cuda, and the CPU figures
#
# Everything goes to $OUT (default ./gpu-check-out): gpu-check.log (all
# output), gpu-check.json (every figure, rewritten after each stage),
# gpu-check-table.txt (jeirt, PyTorch and their ratio, dated), tests.log,
# bench.log and torch.log. Exit 0: all passed; 1: a failure; 2: the bundle is
# incomplete; 3: no CUDA device.
#
# GPU_CHECK_CPU_REHEARSAL=1 (scripts/gpu-rehearse.sh) runs the stages that
# need no GPU on the CPU at a tiny size, to prove the plumbing; its figures
# are not GPU figures and are marked so.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [ ! -f "$here/payload.tar.xz" ]; then
	if [ -f "$here/gpu-bundle.sh" ] && { command -v go >/dev/null || [ -x /usr/local/go/bin/go ]; }; then
		bash "$here/gpu-bundle.sh" || exit 1
		exec bash "$here/../gpu-bundle/gpu-check.sh" "$@"
	fi
	echo "gpu-check: no payload.tar.xz beside $0: build gpu-bundle/ with scripts/gpu-bundle.sh (needs Go) and carry it" >&2
	exit 2
fi

budget=${GPU_CHECK_BUDGET_S:-470}
bw_tbs=${GPU_BANDWIDTH_TBS:-4.8}
rehearsal=${GPU_CHECK_CPU_REHEARSAL:-0}
py=${PYTHON:-python3}
out=${OUT:-$PWD/gpu-check-out}
mkdir -p "$out" || exit 2
exec > >(tee "$out/gpu-check.log") 2>&1
tee_pid=$!
work=$(mktemp -d "${TMPDIR:-/tmp}/jeirt-gpu.XXXXXX") || exit 2
json=$out/gpu-check.json
table=$out/gpu-check-table.txt
rm -f "$table"
stamp=$(date -u +%Y-%m-%dT%H:%M:%SZ)
fail=0
bg=()
dev=cuda
JE=(112 36054 768 1536 256) BIG=(1000 100000) SMALL=(112 36000) # models x items (JE-IRT: inputs, hidden, d)
models="minilm:MiniLM:BERTMiniLM/batch=32 mpnet_base:MPNetBase:MPNetBase modernbert_large:ModernBERTLarge:ModernBERTLarge"
declare -A fig  # figure -> JSON value
keys=()         # figures in the order they were set

set_fig() { # NAME JSON-VALUE
	[ -n "${fig[$1]+x}" ] || keys+=("$1")
	fig[$1]=$2
}
set_str() { set_fig "$1" "\"$(printf '%s' "$2" | tr -d '\000-\037' | sed 's/\\/\\\\/g; s/"/\\"/g')\""; }
num() { [[ $1 =~ ^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$ ]]; }
set_num() { if num "${2:-}"; then set_fig "$1" "$2"; else set_fig "$1" null; fi; }

write_json() {
	{
		printf '{\n  "date": "%s",\n  "seconds": %d,\n  "cpu_rehearsal": %s' "$stamp" "$SECONDS" "$([ "$rehearsal" = 1 ] && echo true || echo false)"
		for k in "${keys[@]}"; do printf ',\n  "%s": %s' "$k" "${fig[$k]}"; done
		printf '\n}\n'
	} >"$json.tmp" && mv "$json.tmp" "$json"
}

note() { printf '\n== %s (%ds)\n' "$*" "$SECONDS"; }
left() { echo $((budget - SECONDS)); }
# stage NAME SECONDS: a header, and whether SECONDS of the budget are left
# (else the stage is recorded as skipped).
stage() {
	note "$1"
	if [ "$(left)" -lt "$2" ]; then
		echo "skipped: $1 needs about $2 s, $(left) s of the budget left"
		set_str "skipped_${3:-stage$SECONDS}" "budget"
		return 1
	fi
}
# cap SECONDS: SECONDS, or what is left of the budget if less.
cap() { local l; l=$(left); echo $(($1 < l ? $1 : (l > 5 ? l : 5))); }
failed() { echo "FAIL: $*" >&2; fail=1; }
# jget FILE KEY: KEY of the last JSON line of FILE.
jget() { "$py" -c 'import json,sys
v=None
for l in open(sys.argv[1]):
    l=l.strip()
    if l.startswith("{"):
        try: v=json.loads(l)
        except ValueError: pass
r=(v or {}).get(sys.argv[2])
print("" if r is None else r)' "$1" "$2" 2>/dev/null; }

# The table: each jeirt figure, PyTorch's, and jeirt's speed-up over PyTorch.
print_table() {
	g() { local v=${fig[$1]:-}; [ "$v" = null ] && v=; v=${v#\"}; echo "${v%\"}"; }
	short() { if num "$1"; then awk -v v="$1" 'BEGIN { printf "%.4g", v }'; else echo "${1:--}"; fi; }
	# row LABEL JEIRT TORCH HIGHER-IS-BETTER
	row() {
		local r=-
		if num "$2" && num "$3" && [ "$(awk -v a="$2" -v b="$3" 'BEGIN { print (a > 0 && b > 0) }')" = 1 ]; then
			r=$(awk -v a="$2" -v b="$3" -v h="$4" 'BEGIN { printf "%.2fx", h ? a / b : b / a }')
		fi
		printf '%-44s %14s %14s %9s\n' "$1" "$(short "$2")" "$(short "$3")" "$r"
	}
	echo "jeirt beside PyTorch on the same machine and device, $stamp"
	[ "$rehearsal" = 1 ] && echo "CPU REHEARSAL at a tiny size: these are not GPU figures"
	[ -n "$(g device)" ] && echo "device: $(g device)${fig[nvidia_smi]:+; $(g nvidia_smi)}"
	echo "PyTorch: $(g torch_version)${fig[transformers_version]:+, transformers $(g transformers_version)}"
	[ -n "$(g cublas)" ] && echo "libcublas: $(g cublas)"
	printf '%-44s %14s %14s %9s\n' "figure, on $dev" "jeirt" "PyTorch" "speed-up"
	row "JE-IRT epoch, ${JE[0]} x ${JE[1]} (s)" "$(g "jeirt_epoch_${dev}_s")" "$(g "torch_epoch_${dev}_s")" 0
	for m in $models; do
		IFS=: read -r key _ _ <<<"$m"
		for p in fp32 tf32 bf16; do
			row "encoder $key $p (sentences/s)" "$(g "encoder_${key}_${p}_jeirt_sps")" "$(g "encoder_${key}_${p}_torch_sps")" 1
		done
	done
	row "2PL $big to a 1e-6 loss gap (s)" "$(g "fit_big_${dev}_gap_s")" "$(g fit_big_torch_gap_s)" 0
	row "2PL $small to a 1e-6 loss gap (s)" "$(g "fit_small_${dev}_gap_s")" "$(g fit_small_torch_gap_s)" 0
	[ -n "$(g cbmm_pass_gbs)" ] && echo "cBMM pass: $(g cbmm_pass_gbs) GB/s, $(g cbmm_pass_peak_pct)% of $bw_tbs TB/s"
	[ -n "$(g bootstrap_cuda_1000_s)" ] && echo "bootstrap, 1,000 replicates at $small on cuda: $(g bootstrap_cuda_1000_s) s"
	if [ "$dev" = cuda ]; then
		echo "jeirt on cpu: JE-IRT epoch $(short "$(g jeirt_epoch_cpu_s)") s; 2PL $big $(short "$(g fit_big_cpu_gap_s)") s to the gap;" \
			"encoder sentences/s (batch 32) $(short "$(g encoder_minilm_cpu_sps)"), $(short "$(g encoder_mpnet_base_cpu_sps)"), $(short "$(g encoder_modernbert_large_cpu_sps)")"
	fi
	echo "(speed-up: PyTorch's seconds over jeirt's, or jeirt's sentences/s over PyTorch's; — where either is missing)"
}

finish() {
	local rc=$?
	for p in "${bg[@]}"; do kill "$p" 2>/dev/null; done
	write_json
	if [ "${printed:-0}" = 0 ] && [ "${probed:-0}" = 1 ]; then print_table | tee "$table"; fi
	echo "gpu-check: $json$([ -f "$table" ] && echo ", $table") ($SECONDS s, exit $rc)"
	rm -rf "$work"
	exec >&- 2>&-
	wait "$tee_pid" 2>/dev/null
	exit "$rc"
}
trap finish EXIT
trap 'echo "gpu-check: interrupted" >&2; exit 130' INT TERM

note "unpack the bundle into $work"
t0=$SECONDS
if ! "$py" -c 'import sys, tarfile
t = tarfile.open(sys.argv[1], "r:xz")
try:
    t.extractall(sys.argv[2], filter="data")
except TypeError:
    t.extractall(sys.argv[2])' "$here/payload.tar.xz" "$work" 2>"$work/unpack.err"; then
	cat "$work/unpack.err"
	if ! (xz -dc "$here/payload.tar.xz" | tar -x -C "$work"); then
		echo "gpu-check: could not unpack $here/payload.tar.xz (python3's lzma and xz both failed)" >&2
		exit 2
	fi
fi
echo "unpacked in $((SECONDS - t0)) s"
cat "$work/BUILD" 2>/dev/null

note "inventory: every file and tool the check needs"
missing=()
for tool in awk sed grep sort tr cut timeout tee date mktemp "$py"; do
	command -v "$tool" >/dev/null || missing+=("tool $tool")
done
nfiles=0
while read -r sum size path; do
	f=$work/$path
	nfiles=$((nfiles + 1))
	if [ ! -f "$f" ]; then
		missing+=("$path")
	elif [ "$(wc -c <"$f")" != "$size" ]; then
		missing+=("$path (size $(wc -c <"$f"), want $size)")
	fi
done <"$here/MANIFEST"
if [ ${#missing[@]} -eq 0 ] && command -v sha256sum >/dev/null; then
	(cd "$work" && awk '{print $1 "  " $3}' "$here/MANIFEST" | sha256sum -c --quiet) >"$work/sums.txt" 2>&1 || missing+=("checksums: $(head -3 "$work/sums.txt" | tr '\n' ' ')")
fi
for b in jeirt jeirt-cuda cuda.test transformer.test; do
	[ -x "$work/bin/$b" ] || missing+=("bin/$b (not executable)")
done
for need in peers/gen_synth.py peers/common.py peers/peer_jeirt_torch.py peers/peer_2pl_torch.py scripts/gpu_torch_peers.py \
	fixtures/tiny-bert/expected.json fixtures/tiny-mpnet/expected.json fixtures/tiny-modernbert/expected.json \
	cuda/kernels/cbmm.ptx cuda/kernels/jeirt.ptx cuda/kernels/encoder.ptx; do
	grep -q " $need\$" "$here/MANIFEST" || missing+=("$need (not in MANIFEST)")
done
if [ ${#missing[@]} -ne 0 ]; then
	printf 'missing: %s\n' "${missing[@]}"
	echo "gpu-check: the bundle is incomplete (${#missing[@]} missing); rebuild it with scripts/gpu-bundle.sh" >&2
	exit 2
fi
bin=$work/bin
peers=$work/peers
tp="$py $work/scripts/gpu_torch_peers.py"
export JEIRT_FIXTURES=$work/fixtures XDG_CACHE_HOME=$work/cache PYTHONUNBUFFERED=1
echo "inventory: $nfiles files present and intact; tools present (python: $(command -v "$py"))"

if [ "$rehearsal" = 1 ]; then
	note "CPU rehearsal: no device probe; the stages that need a GPU are skipped; figures below are not GPU figures"
	dev=cpu
	probed=1
	JE=(20 300 16 32 8) BIG=(60 2000) SMALL=(40 500)
else
	note "device"
	if command -v nvidia-smi >/dev/null; then
		smi=$(timeout 20 nvidia-smi --query-gpu=name,memory.total,memory.used,driver_version,compute_cap --format=csv,noheader 2>&1)
		echo "nvidia-smi: $smi"
		set_str nvidia_smi "$smi"
	fi
	probe=$(timeout 30 "$bin/jeirt-cuda" device probe 2>&1)
	rc=$?
	echo "$probe"
	if [ $rc -ne 0 ]; then
		why=$(printf '%s\n' "$probe" | head -1 | sed 's/^jeirt: //; s/^.*but the CUDA driver did not initialise: /the CUDA driver did not initialise: /')
		set_str device "none: $why"
		if [ -n "${smi:-}" ] && ! printf '%s' "$smi" | grep -qi 'fail\|not found\|no devices'; then
			echo "FAIL: nvidia-smi sees a GPU but jeirt-cuda cannot use it: $why" >&2
			exit 1
		fi
		echo "gpu-check: no CUDA device: $why"
		exit 3
	fi
	set_str device "$probe"
	probed=1
fi
big="${BIG[0]} x ${BIG[1]}"
small="${SMALL[0]} x ${SMALL[1]}"
timeout -k 5 90 $tp probe >"$work/torch-probe.json" 2>&1
tail -1 "$work/torch-probe.json"
for k in torch transformers; do
	v=$(jget "$work/torch-probe.json" $k)
	[ -z "$v" ] || set_str ${k}_version "$v"
done
has_torch=0 has_transformers=0
if [ -z "$(jget "$work/torch-probe.json" torch)" ]; then
	echo "PyTorch: not importable here; the PyTorch figures are skipped"
elif [ "$dev" = cuda ] && [ "$(jget "$work/torch-probe.json" cuda_available)" != True ]; then
	echo "PyTorch: torch.cuda.is_available() is false; the PyTorch figures are skipped"
else
	has_torch=1
	[ -n "$(jget "$work/torch-probe.json" transformers)" ] && has_transformers=1
fi
write_json

# The data, generated in the background while the tests run: the JE-IRT set
# (long CSV and features), and the two 2PL sets (dense .npy for the peer and
# the same cells as a wide CSV for jeirt).
# gen NAME ARGS...: gen_synth.py into $work/NAME; then, for the 2PL sets, the
# wide CSV, and for the JE-IRT set the item ids of features.npy's rows (for
# jeirt's precomputed encoder); then NAME.done, or NAME.failed.
gen() {
	local d=$work/$1
	shift
	if "$py" "$peers/gen_synth.py" --out "$d" "$@" >"$d.log" 2>&1 &&
		if [ "$2" = 2pl ]; then $tp wide "$d" >>"$d.log" 2>&1; else
			"$py" -c "import sys; open(sys.argv[1],'w').write(''.join(f'{j}\n' for j in range(int(sys.argv[2]))))" "$d/features.ids.txt" "${JE[1]}"
		fi; then
		touch "$d.done"
	else
		touch "$d.failed"
	fi
}
(
	gen je --gen jeirt --n "${JE[0]}" --j "${JE[1]}" --d-in "${JE[2]}" --d-true 16 --seed 1
	gen big --gen 2pl --n "${BIG[0]}" --j "${BIG[1]}" --missing 0.1 --seed 1 --d-in 8 --no-csv
	gen small --gen 2pl --n "${SMALL[0]}" --j "${SMALL[1]}" --missing 0.1 --seed 2 --d-in 8 --no-csv
) &
bg+=($!)
# data NAME SECONDS: wait for data set NAME; false if it failed or is late.
data() {
	local i
	for ((i = 0; i < $2 * 2; i++)); do
		[ -f "$work/$1.done" ] && return 0
		[ -f "$work/$1.failed" ] && { failed "generating data $1: $(tail -3 "$work/$1.log")"; return 1; }
		sleep 0.5
	done
	failed "data $1 not ready after $2 s"
	return 1
}

tests=$out/tests.log
bench=$out/bench.log
torchlog=$out/torch.log
: >"$bench"
: >"$torchlog"
# cudatest TIMEOUT ARGS...: bin/cuda.test from the unpacked cuda/ (kernels/ beside it).
cudatest() {
	local t=$1
	shift
	(cd "$work/cuda" && timeout -k 5 "$t" "$bin/cuda.test" "$@")
}

if [ "$dev" = cuda ] && stage "1. correctness: bin/cuda.test, every kernel against the CPU, the fixtures from $JEIRT_FIXTURES" 60 tests; then
	t=$(cap 170)
	cudatest "$t" -test.v -test.count 1 -test.timeout "$((t - 5))s" -test.run 'Test' -test.skip 'Harness' >"$tests" 2>&1
	rc=$?
	grep -E '^(--- |PASS|FAIL|ok|panic)' "$tests" | grep -v -- '--- PASS: .*/' | cut -c1-200
	grep -A2 -- '--- SKIP' "$tests" | grep -v -- '--- SKIP' | sed 's/^ */skipped: /' | cut -c1-300
	cub=$(sed -n 's/.*cuBLAS: //p' "$tests" | head -1)
	echo "libcublas: ${cub:-?}"
	set_str cublas "${cub:-unknown}"
	grep -E 'max \|diff\| from the float64 reference' "$tests" | sed 's/^ *encoder_gpu_test.go:[0-9]*: /encoder precision on cuda: /'
	dp=$(sed -n 's/.*dense products: //p' "$tests" | head -1)
	set_str encoder_dense_products "${dp:-unknown}"
	if [ $rc -ne 0 ]; then
		failed "CUDA tests (exit $rc)"
		tail -40 "$tests" >&2
		set_str tests fail
	else
		set_str tests pass
	fi
	write_json
fi

if [ "$dev" = cuda ] && stage "2. cBMM pass bandwidth: one rank-1 iteration over K copies of 112 x 36,054" 40 cbmm; then
	cudatest "$(cap 90)" -test.run '^$' -test.bench 'CBMMIteration' -test.benchtime 20x -test.timeout 0 >"$work/cbmm.bench" 2>&1 || failed "cBMM benchmark"
	cat "$work/cbmm.bench" >>"$bench"
	grep '^Benchmark' "$work/cbmm.bench"
	gbs=$(awk '/^BenchmarkCBMMIteration\/cuda\/K=64/ { for (i = 2; i < NF; i++) if ($(i+1) == "GB/s") print $i }' "$work/cbmm.bench")
	set_num cbmm_pass_gbs "$gbs"
	if num "$gbs"; then
		pct=$(awk -v g="$gbs" -v b="$bw_tbs" 'BEGIN { printf "%.1f", 100 * g / (b * 1000) }')
		echo "cBMM pass: $gbs GB/s, $pct% of $bw_tbs TB/s"
		set_num cbmm_pass_peak_pct "$pct"
	else
		failed "no cBMM bandwidth figure"
	fi
	write_json
fi

# jeirt_epoch DEVICE: one epoch of jeirt train on the JE-IRT set.
jeirt_epoch() {
	local d=$work/je o=$work/je-train-$1
	cat >"$o.yaml" <<-YAML
		data: {responses: $d/responses.csv, format: long}
		split: {val: 0.1, test: 0.1, seed: 42, by: cell}
		encoder: {spec: "precomputed:$d/features.npy"}
		model: {dim: ${JE[4]}, hidden: ${JE[3]}, dropout: 0.5}
		train: {epochs: 1, batch_size: 512, seed: 42, batching: by-question}
		output: $o
	YAML
	if timeout -k 5 "$2" "$bin/jeirt" train --config "$o.yaml" --force --no-baselines --device "$1" >"$o.log" 2>&1; then
		grep -h '^epoch' "$o.log"
		s=$(sed -n 's/.*"seconds_per_epoch": *\([0-9.e+-]*\).*/\1/p' "$o/metrics.json" | head -1)
		echo "jeirt JE-IRT epoch on $1: ${s:-?} s"
		set_num "jeirt_epoch_${1}_s" "$s"
	else
		failed "jeirt train --device $1 (exit $?)"
		tail -5 "$o.log" >&2
		set_str "jeirt_epoch_${1}_s" fail
	fi
}

note_size="${JE[0]} x ${JE[1]}, ${JE[2]}-d inputs, hidden ${JE[3]}, d ${JE[4]}, batches of 512 by question"
if stage "3. JE-IRT: one epoch on $dev, $note_size; jeirt, then the PyTorch peer" 60 jeirt_epoch && data je 90; then
	jeirt_epoch "$dev" "$(cap 150)"
	if [ $has_torch = 1 ]; then
		t=$(cap 150)
		timeout -k 5 "$t" $tp jeirt-epoch "$work/je" --peers "$peers" --device "$dev" --hidden "${JE[3]}" --dim "${JE[4]}" >"$work/je-torch.log" 2>&1 || failed "PyTorch JE-IRT epoch (exit $?)"
		cat "$work/je-torch.log" >>"$torchlog"
		tail -1 "$work/je-torch.log" | cut -c1-400
		set_num torch_epoch_${dev}_s "$(jget "$work/je-torch.log" sec_per_epoch)"
	fi
	write_json
fi

if stage "4. encoder throughput, 128 tokens, batch 256, fp32 / tf32 / bf16: jeirt on $dev, then PyTorch (transformers, random weights)" 60 encoder; then
	if [ "$dev" = cuda ]; then
		# About a minute (most of it making 530 M random weights on the host).
		cudatest "$(cap 180)" -test.run '^$' -test.bench 'EncoderThroughput' -test.benchtime 1s -test.timeout 0 -test.v >"$work/enc.bench" 2>&1 || failed "encoder GPU benchmarks (exit $?)"
		cat "$work/enc.bench" >>"$bench"
		grep -E '^(Benchmark|--- (SKIP|FAIL))' "$work/enc.bench" | cut -c1-200
	fi
	if [ $has_transformers = 0 ]; then
		echo "PyTorch encoder forwards: skipped (no PyTorch with transformers here)"
	else
		eargs=()
		[ "$rehearsal" = 1 ] && eargs=(--batch 4 --length 16 --models minilm --min-seconds 0)
		timeout -k 5 "$(cap 180)" $tp encoder --device "$dev" "${eargs[@]}" >"$work/enc-torch.log" 2>&1 || echo "PyTorch encoder forwards: exit $? ($(tail -1 "$work/enc-torch.log" | cut -c1-300))"
		cat "$work/enc-torch.log" >>"$torchlog"
		grep '^{' "$work/enc-torch.log" | cut -c1-300
	fi
	for m in $models; do
		IFS=: read -r key gname _ <<<"$m"
		for p in fp32 tf32 bf16; do
			g=$(awk -v p="^BenchmarkEncoderThroughput/$gname/$p" '$1 ~ p { for (i = 2; i < NF; i++) if ($(i+1) == "sentences/s") { print $i; exit } }' "$work/enc.bench" 2>/dev/null)
			[ "$dev" = cuda ] && set_num "encoder_${key}_${p}_jeirt_sps" "$g"
			if [ "$dev" = cuda ] && ! num "$g"; then
				if [ $p != fp32 ] && grep -A1 -- "--- SKIP: BenchmarkEncoderThroughput/$gname/$p" "$work/enc.bench" | grep -q "no cuBLAS"; then
					echo "encoder $key $p: not measured, no cuBLAS"
				else
					failed "no $p figure for $key on cuda"
				fi
			fi
			tsps=$("$py" -c 'import json,sys
for l in open(sys.argv[1]):
    if l.startswith("{"):
        d=json.loads(l)
        if d.get("model")==sys.argv[2] and d.get("precision")==sys.argv[3]: print(d["sentences_per_s"])' "$work/enc-torch.log" "$key" "$p" 2>/dev/null)
			set_num "encoder_${key}_${p}_torch_sps" "$tsps"
		done
	done
	write_json
fi

# fit NAME DATA DEVICE TIMEOUT: jeirt irt fit of DATA's wide CSV to a
# tolerance (1e-10) far below the 1e-6 gap, with its trace.
fit() {
	local o=$work/fit-$1-$3
	if timeout -k 5 "$4" "$bin/jeirt" irt fit --data "$2/responses_wide.csv" --format wide --no-cache --device "$3" \
		--tol 1e-10 --max-iter 1000 --trace "$o.trace.csv" --out "$o" --force >"$o.log" 2>&1; then
		echo "jeirt irt fit $1 on $3: $(tail -1 "$o.trace.csv" | cut -d, -f1) s, $(($(wc -l <"$o.trace.csv") - 1)) iterations, loss $(tail -1 "$o.trace.csv" | cut -d, -f2)"
	else
		failed "jeirt irt fit $1 on $3 (exit $?)"
		tail -5 "$o.log" >&2
	fi
}
# torch2pl NAME DATA MAX: the PyTorch peer's Adam fit of the same cells, to
# a tolerance tight enough that it can reach the gap if it ever does, for at
# most MAX seconds.
torch2pl() { # NAME DATA MAX
	local o=$work/fit-$1-torch
	[ $has_torch = 1 ] || return 0
	timeout -k 5 "$(($3 + 60))" $tp 2pl "$2" --peers "$peers" --device "$dev" --tol 1e-10 --max-iter 100000 --max-seconds "$3" \
		--trace "$o.trace.csv" >"$o.log" 2>&1 || failed "PyTorch 2PL fit $1 (exit $?)"
	cat "$o.log" >>"$torchlog"
	tail -1 "$o.log" | cut -c1-300
}
# gaps NAME: seconds until each run's loss came within 1e-6 (relative) of the
# lowest loss any run reached (jeirt's float64 traces on cuda and cpu, the
# peer's final loss recomputed in float64; the peer's trace is its own float32
# loss); "not reached" otherwise.
gaps() {
	local best s f
	best=$( { for f in "$work"/fit-"$1"-c*.trace.csv; do [ -f "$f" ] && awk -F, 'NR > 1 { print $2 }' "$f"; done
		[ -f "$work/fit-$1-torch.log" ] && jget "$work/fit-$1-torch.log" loss; } | sort -g | head -1)
	num "$best" || return
	set_num "fit_${1}_best_loss" "$best"
	for f in "$work"/fit-"$1"-*.trace.csv; do
		[ -f "$f" ] || continue
		local who=${f#"$work/fit-$1-"}
		who=${who%.trace.csv}
		s=$(awk -F, -v best="$best" 'NR > 1 && ($2 - best) / best <= 1e-6 { printf "%.3f", $1; exit }' "$f")
		local last
		last=$(tail -1 "$f" | awk -F, -v best="$best" '{ printf "%.2g", ($2 - best) / best }')
		echo "$1 $who: ${s:-not reached (gap $last at the end of the run)} s to a relative loss gap of 1e-6"
		if num "$s"; then set_num "fit_${1}_${who}_gap_s" "$s"; else set_str "fit_${1}_${who}_gap_s" "not reached (gap $last)"; fi
	done
}

if stage "5. 2PL fit, $big, 10% missing: jeirt on $dev, then the PyTorch peer (Adam) on $dev, the same cells" 60 fit_big && data big 120; then
	fit big "$work/big" "$dev" "$(cap 120)"
	torch2pl big "$work/big" "$(cap 30)"
	gaps big
	write_json
fi

if stage "6a. 2PL fit, $small, 10% missing, both on $dev" 40 fit_small && data small 60; then
	fit small "$work/small" "$dev" "$(cap 60)"
	torch2pl small "$work/small" "$(cap 20)"
	gaps small
	write_json
fi

if [ "$dev" = cuda ] && stage "6b. bootstrap: 1,000 replicates at $small on cuda" 60 bootstrap && data small 10; then
	o=$work/boot
	if timeout -k 5 "$(cap 120)" "$bin/jeirt" irt fit --data "$work/small/responses_wide.csv" --format wide --no-cache --device cuda --bootstrap 1000 --out "$o" >"$o.log" 2>&1; then
		s=$(sed -n 's/.*"bootstrap_seconds": *\([0-9.e+-]*\).*/\1/p' "$o/fit.json" | head -1)
		echo "bootstrap on cuda: 1,000 replicates in ${s:-?} s"
		set_num bootstrap_cuda_1000_s "$s"
	else
		failed "bootstrap on cuda"
		tail -5 "$o.log" >&2
	fi
	write_json
fi

if [ "$dev" = cuda ]; then
	if stage "6c. the CPU figures: JE-IRT epoch on cpu" 120 jeirt_epoch_cpu; then
		jeirt_epoch cpu "$(cap 200)"
		write_json
	fi
	if stage "6d. the CPU figures: 2PL fit $big on cpu" 60 fit_big_cpu; then
		fit big "$work/big" cpu "$(cap 150)"
		gaps big
		write_json
	fi
	if stage "6e. the CPU figures: encoder forwards on cpu (batch 32)" 40 encoder_cpu; then
		(cd "$work" && JEIRT_BENCH_BATCH=32 timeout -k 5 "$(cap 150)" "$bin/transformer.test" -test.run '^$' \
			-test.bench '^Benchmark(BERTMiniLM|MPNetBase|ModernBERTLarge)$' -test.benchtime 1x -test.timeout 0) >"$work/enc-cpu.bench" 2>&1 || echo "encoder CPU benchmarks: cut short by the budget"
		cat "$work/enc-cpu.bench" >>"$bench"
		grep '^Benchmark' "$work/enc-cpu.bench"
		for m in $models; do
			IFS=: read -r key _ cname <<<"$m"
			set_num "encoder_${key}_cpu_sps" "$(awk -v p="^Benchmark$cname" '$1 ~ p { for (i = 2; i < NF; i++) if ($(i+1) == "sentences/s") { print $i; exit } }' "$work/enc-cpu.bench")"
		done
		write_json
	fi
fi

note "figures"
print_table | tee "$table"
printed=1
if [ $fail -ne 0 ]; then
	note "gpu-check: FAILED"
	exit 1
fi
note "gpu-check: all passed"
