#!/usr/bin/env bash
# The GPU check: every kernel against the CPU, then the figures no one has
# measured yet, with PyTorch on the same GPU in the same run. It runs from the
# bundle that scripts/gpu-bundle.sh builds (gpu-bundle/: this script, the
# stripped binaries, the fixtures, the peers), with no Go and no network:
#
#   bash gpu-bundle/gpu-check.sh [--budget SECONDS]   # on the GPU machine (docs/gpu.md has the command)
#   scripts/gpu-check.sh [--budget SECONDS]           # from a checkout with Go: builds the bundle first
#
# The budget (--budget, or GPU_CHECK_BUDGET_S; default 480 s) is the whole
# call. It is cut into one share per stage (the plan, printed first and
# recorded in gpu-check.json; the shares sum to the budget), and stages run
# in order of value:
#
#   correctness  setup        unpack, inventory, the bundle's commit against the
#                             checkout, the libraries and symbol versions the
#                             binaries need against this machine's
#                probe        nvidia-smi, the kernels assembled for this GPU
#                             (ptxas, when the machine has it; else the driver's
#                             JIT, cached for the call), jeirt-cuda device probe
#                tests        bin/cuda.test: every kernel against the CPU
#   headline     cbmm         the cBMM pass's bandwidth, beside a device copy
#                fit_big      2PL, 1,000 x 100,000, to a 1e-6 loss gap: jeirt and PyTorch
#                jeirt_epoch  a warm JE-IRT epoch at EmbedLLM size: jeirt and PyTorch
#                encoder      encoder sentences/s, fp32 / tf32 / bf16: jeirt and PyTorch
#   extra        fit_small    2PL, 112 x 36,000: jeirt and PyTorch
#                bootstrap    replicates at 112 x 36,000 on cuda, as many as fit
#                cpu          the same figures on the CPU
#
# A stage may use its share and whatever the stages before it left unused; it
# stops at that deadline. A stage cut short keeps what it measured and is
# `partial`; one with no time left is `skipped`; a command that fails makes it
# `fail`. Work is sized to the share where it can be (the bootstrap from a
# first small batch of replicates, the PyTorch fits' time limits).
#
# Exit status: 0 when every correctness stage passed, whatever the other
# stages did (the summary says which figures are complete); 1 when a
# correctness stage failed; 2 when the bundle is incomplete; 3 when there is
# no CUDA device; 4 when a correctness stage was cut short by the budget and
# nothing failed.
#
# Everything goes to $OUT (default ./gpu-check-out): gpu-check.log (all
# output), gpu-check.json (the plan, each stage's status and every figure,
# rewritten after each stage), gpu-check-summary.txt (the stages and which
# figures are complete), gpu-check-table.txt (jeirt, PyTorch, their ratio and
# the settings they share, dated), tests.log, bench.log and torch.log.
#
# GPU_CHECK_CPU_REHEARSAL=1 (scripts/gpu-rehearse.sh) runs the stages on the
# CPU at a tiny size to prove the plumbing (its correctness stage is the CPU
# encoder against the fixtures); its figures are not GPU figures and are
# marked so. In a rehearsal only, GPU_CHECK_REHEARSE_CUT=STAGE/PART makes that
# timed command overrun its deadline (to show `partial`), and
# GPU_CHECK_REHEARSE_FAIL=STAGE makes that stage fail (to show the exit status).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
budget=${GPU_CHECK_BUDGET_S:-480}
while [ $# -gt 0 ]; do
	case $1 in
	--budget) budget=${2:-}; shift 2 || shift ;;
	--budget=*) budget=${1#*=}; shift ;;
	*) echo "gpu-check: unknown argument $1 (usage: gpu-check.sh [--budget SECONDS])" >&2; exit 2 ;;
	esac
done
if ! [[ $budget =~ ^[0-9]+$ ]] || [ "$budget" -lt 20 ]; then
	echo "gpu-check: --budget must be a whole number of seconds, at least 20 (got '$budget')" >&2
	exit 2
fi
if [ ! -f "$here/payload.tar.xz" ]; then
	if [ -f "$here/gpu-bundle.sh" ] && { command -v go >/dev/null || [ -x /usr/local/go/bin/go ]; }; then
		bash "$here/gpu-bundle.sh" || exit 1
		exec bash "$here/../gpu-bundle/gpu-check.sh" --budget "$budget"
	fi
	echo "gpu-check: no payload.tar.xz beside $0: build gpu-bundle/ with scripts/gpu-bundle.sh (needs Go) and carry it" >&2
	exit 2
fi

bw_tbs=${GPU_BANDWIDTH_TBS:-4.8}
rehearsal=${GPU_CHECK_CPU_REHEARSAL:-0}
cut_part=${GPU_CHECK_REHEARSE_CUT:-}
fail_stage=${GPU_CHECK_REHEARSE_FAIL:-}
[ "$rehearsal" = 1 ] || { cut_part=; fail_stage=; }
py=${PYTHON:-python3}
checkout=$PWD
out=${OUT:-$PWD/gpu-check-out}
mkdir -p "$out" || exit 2
exec > >(tee "$out/gpu-check.log") 2>&1
tee_pid=$!
exec 3>&1 # the log, for what tmo says while a command's output goes to a file
work=$(mktemp -d "${TMPDIR:-/tmp}/jeirt-gpu.XXXXXX") || exit 2
json=$out/gpu-check.json
table=$out/gpu-check-table.txt
summary=$out/gpu-check-summary.txt
rm -f "$table" "$summary"
stamp=$(date -u +%Y-%m-%dT%H:%M:%SZ)
bg=()
dev=cuda
JE=(112 36054 768 1536 256) BIG=(1000 100000) SMALL=(112 36000) # models x items (JE-IRT: inputs, hidden, d)
boot_max=1000 # bootstrap replicates, at most
models="minilm:MiniLM:BERTMiniLM/batch=32 mpnet_base:MPNetBase:MPNetBase modernbert_large:ModernBERTLarge:ModernBERTLarge"
# The settings both sides of each comparison share (printed beside the ratios).
JE_SET="dropout 0.5, AdamW (weight decay 0.3), lr 1e-3, batches of 512 pairs by question, float32 products, warm: jeirt's second epoch, PyTorch's epoch after 30 warm-up steps"
FIT_SET="the same cells and objective, float64 loss sums; the clock from the end of each side's first iteration (reading, upload and set-up excluded for both)"
ENC_SET="128 tokens, batch 256, random weights; fp32 without TF32; tf32 and bf16 in the linear layers only (attention, norms, softmax in float32 on both sides); pooled vectors copied to the host"
declare -A fig  # figure -> JSON value
keys=()         # figures in the order they were set

# The plan: stage, class, share of a 480 s budget, what it does.
plan=(
	"setup correctness 15 unpack, inventory, the bundle against the checkout, libraries"
	"probe correctness 45 nvidia-smi, kernels assembled for this GPU, jeirt-cuda device probe, PyTorch"
	"tests correctness 100 bin/cuda.test: every kernel against the CPU"
	"cbmm headline 20 the cBMM pass's bandwidth beside a device copy"
	"fit_big headline 70 2PL 1,000 x 100,000 to a 1e-6 gap: jeirt, PyTorch"
	"jeirt_epoch headline 50 a warm JE-IRT epoch at EmbedLLM size: jeirt, PyTorch"
	"encoder headline 100 encoder sentences/s fp32/tf32/bf16: jeirt, PyTorch"
	"fit_small extra 20 2PL 112 x 36,000: jeirt, PyTorch"
	"bootstrap extra 25 bootstrap replicates at 112 x 36,000, sized to the share"
	"cpu extra 35 the JE-IRT epoch, the big fit and the encoders on the CPU"
)
declare -A share class deadline status used what
order=()
acc=0
for p in "${plan[@]}"; do
	read -r n c s w <<<"$p"
	order+=("$n")
	class[$n]=$c
	share[$n]=$((s * budget / 480))
	what[$n]=$w
	acc=$((acc + share[$n]))
	deadline[$n]=$acc
	status[$n]=not-run
done
cur=

set_fig() { # NAME JSON-VALUE
	[ -n "${fig[$1]+x}" ] || keys+=("$1")
	fig[$1]=$2
}
jstr() { printf '"%s"' "$(printf '%s' "$1" | tr -d '\000-\037' | sed 's/\\/\\\\/g; s/"/\\"/g')"; }
set_str() { set_fig "$1" "$(jstr "$2")"; }
num() { [[ $1 =~ ^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$ ]]; }
set_num() { if num "${2:-}"; then set_fig "$1" "$2"; else set_fig "$1" null; fi; }

write_json() {
	{
		printf '{\n  "date": %s,\n  "seconds": %d,\n  "budget_s": %d,\n  "cpu_rehearsal": %s,\n  "stages": {' \
			"$(jstr "$stamp")" "$SECONDS" "$budget" "$([ "$rehearsal" = 1 ] && echo true || echo false)"
		local sep=
		for n in "${order[@]}"; do
			printf '%s\n    "%s": {"class": "%s", "share_s": %d, "deadline_s": %d, "status": "%s", "seconds": %s}' \
				"$sep" "$n" "${class[$n]}" "${share[$n]}" "${deadline[$n]}" "${status[$n]}" "${used[$n]:-null}"
			sep=,
		done
		printf '\n  }'
		for k in "${keys[@]}"; do printf ',\n  "%s": %s' "$k" "${fig[$k]}"; done
		printf '\n}\n'
	} >"$json.tmp" && mv "$json.tmp" "$json"
}

print_plan() {
	echo "plan: a budget of $budget s for the whole call; each stage's share, in the order they run (sum $acc s):"
	printf '  %-12s %-12s %6s %9s  %s\n' stage class share "ends by" what
	for n in "${order[@]}"; do
		printf '  %-12s %-12s %5ds %8ds  %s\n' "$n" "${class[$n]}" "${share[$n]}" "${deadline[$n]}" "${what[$n]}"
	done
}

note() { printf '\n== %s (%ds)\n' "$*" "$SECONDS"; }
# allow: the seconds the current stage has left (its deadline, within the budget).
allow() { local d=${deadline[$cur]}; [ "$d" -le "$budget" ] || d=$budget; echo $((d - SECONDS)); }
# part FRACTION: that fraction of what the current stage has left, at least 3 s.
part() { awk -v a="$(allow)" -v f="$1" 'BEGIN { s = int(a * f); print (s < 3 ? 3 : s) }'; }
# begin NAME TITLE MIN: start stage NAME when at least MIN seconds of it are left; else skipped.
begin() {
	cur=$1
	note "$1: $2"
	if [ "$(allow)" -lt "$3" ]; then
		echo "skipped: $1 needs about $3 s, $(allow) s of its share left"
		status[$1]=skipped
		used[$1]=0
		write_json
		return 1
	fi
	status[$1]=pass
	t_begin=$SECONDS
}
# mark STATUS: the current stage is at least that bad (fail > partial > pass).
mark() {
	case "$1:${status[$cur]}" in
	fail:*) status[$cur]=fail ;;
	partial:pass) status[$cur]=partial ;;
	esac
}
end() {
	[ "$fail_stage" = "$cur" ] && { echo "FAIL: $cur (GPU_CHECK_REHEARSE_FAIL, a rehearsal of a failing stage)"; mark fail; }
	used[$cur]=$((SECONDS - t_begin))
	echo "stage $cur: ${status[$cur]} in ${used[$cur]} s (share ${share[$cur]} s, deadline ${deadline[$cur]} s)"
	write_json
}
failed() { echo "FAIL: $*" >&2; mark fail; }
# tmo LABEL SECONDS CMD...: CMD under a timeout; a timeout marks the stage
# partial and says so. Returns CMD's status (124 on a timeout).
tmo() {
	local label=$1 t=$2 rc
	shift 2
	if [ -n "$cut_part" ] && [ "$cut_part" = "$label" ]; then
		echo "rehearsal: $label made to overrun its deadline (GPU_CHECK_REHEARSE_CUT): 2 s left, 5 s of work" >&3
		t=2
		timeout -k 1 "$t" sleep 5
		rc=$?
	else
		timeout -k 5 "$t" "$@"
		rc=$?
	fi
	if [ $rc = 124 ] || [ $rc = 137 ]; then
		echo "cut short: $label reached the stage's deadline after $t s; what it measured is kept" >&3
		mark partial
		return 124
	fi
	return $rc
}
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

# The table: each jeirt figure, PyTorch's, jeirt's speed-up, and what they share.
print_table() {
	g() { local v=${fig[$1]:-}; [ "$v" = null ] && v=; v=${v#\"}; echo "${v%\"}"; }
	short() { if num "$1"; then awk -v v="$1" 'BEGIN { printf "%.4g", v }'; else echo "${1:--}"; fi; }
	row() { # LABEL JEIRT TORCH HIGHER-IS-BETTER
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
	echo "settings, JE-IRT: $JE_SET"
	echo "settings, 2PL: $FIT_SET"
	echo "settings, encoder: $ENC_SET"
	[ -n "$(g cbmm_pass_gbs)" ] && echo "cBMM pass: $(g cbmm_pass_gbs) GB/s ($(g cbmm_bytes_per_cell) bytes per cell), $(g cbmm_pass_copy_pct)% of a device copy's $(g device_copy_gbs) GB/s, $(g cbmm_pass_peak_pct)% of $bw_tbs TB/s"
	[ -n "$(g bootstrap_cuda_s)" ] && echo "bootstrap at $small on cuda: $(g bootstrap_cuda_replicates) replicates in $(g bootstrap_cuda_s) s"
	if [ "$dev" = cuda ]; then
		echo "jeirt on cpu: JE-IRT epoch $(short "$(g jeirt_epoch_cpu_s)") s; 2PL $big $(short "$(g fit_big_cpu_gap_s)") s to the gap;" \
			"encoder sentences/s (batch 32) $(short "$(g encoder_minilm_cpu_sps)"), $(short "$(g encoder_mpnet_base_cpu_sps)"), $(short "$(g encoder_modernbert_large_cpu_sps)")"
	fi
	echo "(speed-up: PyTorch's seconds over jeirt's, or jeirt's sentences/s over PyTorch's; - where either is missing)"
}

# The stages, what they measured and whether it is complete.
print_summary() {
	echo "gpu-check summary, $stamp, budget $budget s, $SECONDS s used$([ "$rehearsal" = 1 ] && echo ' (CPU REHEARSAL: not GPU figures)')"
	printf '  %-12s %-12s %-8s %9s  %s\n' stage class status "used/share" "figures"
	for n in "${order[@]}"; do
		local figs
		case ${status[$n]} in
		pass) figs="complete" ;;
		partial) figs="partial: cut short by the budget, what it measured is in gpu-check.json" ;;
		fail) figs="a command failed (see gpu-check.log)" ;;
		skipped) figs="not measured: no time left in its share" ;;
		not-run | n/a) figs="not run${not_run_why[$n]:+: ${not_run_why[$n]}}" ;;
		esac
		printf '  %-12s %-12s %-8s %4s/%-4s  %s\n' "$n" "${class[$n]}" "${status[$n]}" "${used[$n]:--}" "${share[$n]}" "$figs"
	done
	echo "exit $(verdict): $(verdict_words)"
}
declare -A not_run_why
# verdict: the exit status the correctness stages give.
verdict() {
	local v=0 n
	for n in "${order[@]}"; do
		[ "${class[$n]}" = correctness ] || continue
		case ${status[$n]} in
		fail) v=1 ;;
		partial | skipped | not-run) [ $v = 0 ] && v=4 ;;
		esac
	done
	echo $v
}
verdict_words() {
	case $(verdict) in
	0) echo "every correctness stage passed" ;;
	1) echo "a correctness stage failed" ;;
	4) echo "a correctness stage was cut short or not reached; nothing failed" ;;
	esac
}

finish() {
	local rc=$?
	for p in "${bg[@]}"; do kill "$p" 2>/dev/null; done
	[ -n "$cur" ] && [ -z "${used[$cur]:-}" ] && used[$cur]=$((SECONDS - ${t_begin:-0}))
	write_json
	if [ "${printed:-0}" = 0 ] && [ "${probed:-0}" = 1 ]; then print_table | tee "$table"; fi
	[ "${probed:-0}" = 1 ] && print_summary | tee "$summary"
	echo "gpu-check: $json$([ -f "$table" ] && echo ", $table")$([ -f "$summary" ] && echo ", $summary") ($SECONDS s, exit $rc)"
	rm -rf "$work"
	exec >&- 2>&- 3>&-
	wait "$tee_pid" 2>/dev/null
	exit "$rc"
}
trap finish EXIT
trap 'echo "gpu-check: interrupted" >&2; exit 130' INT TERM

print_plan
write_json

begin setup "unpack the bundle into $work, inventory, identity, libraries" 1
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
		status[setup]=fail
		exit 2
	fi
fi
echo "unpacked in $((SECONDS - t0)) s"
cat "$work/BUILD" 2>/dev/null
set_str bundle_commit "$(sed -n 's/^commit: //p' "$work/BUILD" 2>/dev/null)"

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
	cuda/kernels/cbmm.ptx cuda/kernels/jeirt.ptx cuda/kernels/encoder.ptx SOURCES NEEDS; do
	grep -q " $need\$" "$here/MANIFEST" || missing+=("$need (not in MANIFEST)")
done
if [ ${#missing[@]} -ne 0 ]; then
	printf 'missing: %s\n' "${missing[@]}"
	echo "gpu-check: the bundle is incomplete (${#missing[@]} missing); rebuild it with scripts/gpu-bundle.sh" >&2
	status[setup]=fail
	exit 2
fi
bin=$work/bin
peers=$work/peers
tp="$py $work/scripts/gpu_torch_peers.py"
export JEIRT_FIXTURES=$work/fixtures XDG_CACHE_HOME=$work/cache PYTHONUNBUFFERED=1
echo "inventory: $nfiles files present and intact; tools present (python: $(command -v "$py"))"

# The bundle against the checkout it travelled with: the files it was built
# from (SOURCES: sha256 and path) compared with the ones here. A mismatch is
# reported, not fatal: the figures are still the bundle's.
if [ -f "$checkout/go.mod" ] && command -v sha256sum >/dev/null; then
	differ=$(cd "$checkout" && sha256sum -c --quiet "$work/SOURCES" 2>/dev/null | sed 's/: .*//' | sort)
	ndiff=$(printf '%s' "$differ" | grep -c . || true)
	if [ "$ndiff" = 0 ]; then
		echo "checkout: $checkout matches the bundle's sources ($(wc -l <"$work/SOURCES") files)"
		set_str bundle_matches_checkout yes
	else
		echo "checkout: $ndiff of $(wc -l <"$work/SOURCES") files differ from the ones the bundle was built from (not fatal; the figures are the bundle's): $(printf '%s' "$differ" | head -5 | tr '\n' ' ')"
		set_str bundle_matches_checkout "no: $ndiff files differ"
	fi
else
	echo "checkout: no checkout at $checkout to compare the bundle with"
	set_str bundle_matches_checkout "no checkout here"
fi

# NEEDS: each binary's shared libraries and the symbol versions it needs from
# them (readelf at build time), checked against this machine's libraries.
libdirs="/lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu /lib64 /usr/lib64 /lib /usr/lib"
findlib() {
	local d p
	p=$(ldconfig -p 2>/dev/null | awk -v l="$1" '$1 == l && /x86-64/ { print $NF; exit }')
	[ -n "$p" ] && { echo "$p"; return; }
	for d in $libdirs; do [ -e "$d/$1" ] && { echo "$d/$1"; return; }; done
}
libs_bad=()
while read -r b lib vers; do
	p=$(findlib "$lib")
	if [ -z "$p" ]; then
		case $lib in libcuda.so.1) [ "$rehearsal" = 1 ] && continue ;; esac
		libs_bad+=("$b: $lib not found")
		continue
	fi
	for v in ${vers//,/ }; do
		[ "$v" = - ] && continue
		grep -qaFw "$v" "$(readlink -f "$p")" || libs_bad+=("$b: $lib ($p) lacks $v")
	done
	echo "library: $b needs $lib ${vers//,/ } : found $p"
done <"$work/NEEDS"
if [ ${#libs_bad[@]} -ne 0 ]; then
	printf 'library missing: %s\n' "${libs_bad[@]}"
	failed "this machine lacks ${#libs_bad[@]} librar(ies) or symbol version(s) the binaries need"
	set_str libraries "$(printf '%s; ' "${libs_bad[@]}")"
else
	set_str libraries "all present"
fi
end
probed=1

# The kernels: assembled for this GPU by ptxas when the machine has it (the
# CUDA toolkit's, or the one in PyTorch's nvidia-cuda-nvcc wheel), so that no
# device open waits for the driver's JIT; else the driver JIT-compiles the
# PTX at the first open, into a cache of this call's own, once.
export CUDA_CACHE_PATH=$work/cuda-jit-cache CUDA_CACHE_MAXSIZE=4294967296 CUDA_CACHE_DISABLE=0
find_ptxas() {
	local c
	for c in "$(command -v ptxas 2>/dev/null)" /usr/local/cuda/bin/ptxas /usr/local/cuda-*/bin/ptxas \
		$("$py" -c 'import nvidia, os; print(" ".join(os.path.join(p, "cuda_nvcc", "bin", "ptxas") for p in nvidia.__path__))' 2>/dev/null); do
		[ -n "$c" ] && [ -x "$c" ] && { echo "$c"; return; }
	done
}
if [ "$rehearsal" = 1 ]; then
	note "CPU rehearsal: no device probe; the stages that need a GPU are skipped; figures below are not GPU figures"
	dev=cpu
	JE=(20 300 16 32 8) BIG=(60 2000) SMALL=(40 500) boot_max=100
	status[probe]=n/a used[probe]=0
	not_run_why[probe]="CPU rehearsal"
	write_json
elif begin probe "the device" 5; then
	cc=
	if command -v nvidia-smi >/dev/null; then
		smi=$(timeout 20 nvidia-smi --query-gpu=name,memory.total,memory.used,driver_version,compute_cap --format=csv,noheader 2>&1)
		echo "nvidia-smi: $smi"
		set_str nvidia_smi "$smi"
		cc=$(printf '%s' "$smi" | head -1 | awk -F', *' '{ print $NF }' | tr -d '.' | grep -E '^[0-9]+$')
	fi
	pt=$(find_ptxas)
	if [ -n "$cc" ] && [ -n "$pt" ]; then
		mkdir -p "$work/cubin"
		t0=$SECONDS
		pids=()
		for f in "$work"/cuda/kernels/*.ptx; do
			n=$(basename "$f" .ptx)
			timeout -k 5 "$(part 0.5)" "$pt" -arch="sm_$cc" -O3 "$f" -o "$work/cubin/$n.sm_$cc.cubin" 2>"$work/cubin/$n.err" &
			pids+=($!)
		done
		okc=0
		for p in "${pids[@]}"; do wait "$p" && okc=$((okc + 1)); done
		echo "kernels: $okc of ${#pids[@]} modules assembled for sm_$cc by $pt ($("$pt" --version 2>/dev/null | tail -1)) in $((SECONDS - t0)) s"
		cat "$work"/cubin/*.err 2>/dev/null | head -5
		export JEIRT_CUDA_CUBINS=$work/cubin
		set_str kernels_assembled "$okc of ${#pids[@]} for sm_$cc in $((SECONDS - t0)) s"
	else
		echo "kernels: no ptxas here (or no compute capability from nvidia-smi): the driver JIT-compiles the PTX at the first open, cached in $CUDA_CACHE_PATH for the rest of the call"
		set_str kernels_assembled "no: driver JIT, cached for the call"
	fi
	t0=$SECONDS
	pt_s=$(part 0.6)
	probe=$(timeout -k 5 "$pt_s" "$bin/jeirt-cuda" device probe 2>&1)
	rc=$?
	echo "$probe"
	set_num probe_first_s $((SECONDS - t0))
	if [ $rc = 124 ] || [ $rc = 137 ]; then
		echo "gpu-check: jeirt-cuda device probe gave no answer within $pt_s s; the first open of a GPU compiles the kernels (PTX) for it unless cubins were assembled above; see the kernels line" >&2
	fi
	if [ $rc -ne 0 ]; then
		why=$(printf '%s\n' "$probe" | head -1 | sed 's/^jeirt: //; s/^.*but the CUDA driver did not initialise: /the CUDA driver did not initialise: /')
		[ $rc = 124 ] && why="no answer within $pt_s s"
		set_str device "none: $why"
		if [ -n "${smi:-}" ] && ! printf '%s' "$smi" | grep -qi 'fail\|not found\|no devices'; then
			failed "nvidia-smi sees a GPU but jeirt-cuda cannot use it: $why"
			end
			exit 1
		fi
		echo "gpu-check: no CUDA device: $why"
		probed=0
		exit 3
	fi
	set_str device "$probe"
	t0=$SECONDS
	timeout -k 5 "$(part 0.5)" "$bin/jeirt-cuda" device probe >/dev/null 2>&1
	set_num probe_second_s $((SECONDS - t0))
	echo "device probe: $(printf '%s' "${fig[probe_first_s]}") s the first time, ${fig[probe_second_s]} s the second"
fi
big="${BIG[0]} x ${BIG[1]}"
small="${SMALL[0]} x ${SMALL[1]}"
[ "$rehearsal" = 1 ] && cur=probe && t_begin=$SECONDS
tmo probe/torch "$(part 0.9)" $tp probe >"$work/torch-probe.json" 2>&1
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
[ "$rehearsal" = 1 ] || end
write_json

# The data, generated in the background while the tests run: the JE-IRT set
# (long CSV and features), and the two 2PL sets (dense .npy for the peer and
# the same cells as a wide CSV for jeirt).
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
# data NAME: wait for data set NAME within the stage's time; false if it failed or is late.
data() {
	while [ "$(allow)" -gt 2 ]; do
		[ -f "$work/$1.done" ] && return 0
		[ -f "$work/$1.failed" ] && { failed "generating data $1: $(tail -3 "$work/$1.log")"; return 1; }
		sleep 0.5
	done
	echo "cut short: data $1 not ready by the stage's deadline"
	mark partial
	return 1
}

tests=$out/tests.log
bench=$out/bench.log
torchlog=$out/torch.log
: >"$bench"
: >"$torchlog"
# cudatest LABEL TIMEOUT ARGS...: bin/cuda.test from the unpacked cuda/ (kernels/ beside it).
cudatest() {
	local l=$1 t=$2
	shift 2
	(cd "$work/cuda" && tmo "$l" "$t" "$bin/cuda.test" "$@")
}
# gotest_report LOG: the test binary's verdicts, and counts into the figures.
gotest_report() {
	grep -E '^(--- |PASS|FAIL|ok|panic)' "$1" | grep -v -- '--- PASS: .*/' | cut -c1-200
	grep -A2 -- '--- SKIP' "$1" | grep -v -- '--- SKIP' | sed 's/^ */skipped: /' | cut -c1-300
	set_num tests_passed "$(grep -c -- '^--- PASS' "$1")"
	set_num tests_failed "$(grep -c -- '^--- FAIL' "$1")"
	set_num tests_skipped "$(grep -c -- '^--- SKIP' "$1")"
	set_str tests_failed_names "$(grep -- '^--- FAIL' "$1" | awk '{ print $3 }' | tr '\n' ' ')"
}

if begin tests "correctness: $([ "$dev" = cuda ] && echo "bin/cuda.test, every kernel against the CPU" || echo "bin/transformer.test, the CPU encoder against the fixtures") ($JEIRT_FIXTURES)" 20; then
	t=$(allow)
	if [ "$dev" = cuda ]; then
		cudatest tests/cuda.test "$t" -test.v -test.count 1 -test.timeout 0 -test.run 'Test' -test.skip 'Harness' >"$tests" 2>&1
	else
		(cd "$work" && tmo tests/transformer.test "$t" "$bin/transformer.test" -test.v -test.count 1 -test.timeout 0 -test.run 'MatchesFixture') >"$tests" 2>&1
	fi
	rc=$?
	gotest_report "$tests"
	cub=$(sed -n 's/.*cuBLAS: //p' "$tests" | head -1)
	[ "$dev" = cuda ] && { echo "libcublas: ${cub:-?}"; set_str cublas "${cub:-unknown}"; }
	grep -E 'max \|diff\| from the float64 reference' "$tests" | sed 's/^ *encoder_gpu_test.go:[0-9]*: /encoder precision on cuda: /'
	dp=$(sed -n 's/.*dense products: //p' "$tests" | head -1)
	[ -n "$dp" ] && set_str encoder_dense_products "$dp"
	if [ "${fig[tests_passed]}" = 0 ]; then
		failed "no test passed"
	elif [ $rc = 124 ]; then
		echo "the tests were cut short by the budget: ${fig[tests_passed]} passed before that"
	elif [ $rc -ne 0 ]; then
		failed "the tests (exit $rc): ${fig[tests_failed_names]}"
		tail -40 "$tests" >&2
	fi
	end
fi

if [ "$dev" != cuda ]; then
	not_run_why[cbmm]="needs a GPU"
elif begin cbmm "the cBMM pass's bandwidth: one rank-1 iteration over K copies of 112 x 36,054, beside a device-to-device copy" 10; then
	cudatest cbmm/bench "$(allow)" -test.run '^$' -test.bench 'CBMMIteration|DeviceCopy' -test.benchtime 20x -test.timeout 0 >"$work/cbmm.bench" 2>&1 || [ $? = 124 ] || failed "cBMM benchmark"
	cat "$work/cbmm.bench" >>"$bench"
	grep -E '^Benchmark|bytes per cell' "$work/cbmm.bench"
	unit() { awk -v p="$1" -v u="$2" '$1 ~ p { for (i = 2; i < NF; i++) if ($(i+1) == u) { print $i; exit } }' "$work/cbmm.bench"; }
	gbs=$(unit '^BenchmarkCBMMIteration/cuda/K=64' GB/s)
	copy=$(unit '^BenchmarkDeviceCopy' GB/s)
	bpc=$(sed -n 's/.*bytes per cell: *\([0-9]*\).*/\1/p' "$work/cbmm.bench" | head -1)
	set_num cbmm_pass_gbs "$gbs"
	set_num device_copy_gbs "$copy"
	set_num cbmm_bytes_per_cell "$bpc"
	if num "$gbs"; then
		pct=$(awk -v g="$gbs" -v b="$bw_tbs" 'BEGIN { printf "%.1f", 100 * g / (b * 1000) }')
		set_num cbmm_pass_peak_pct "$pct"
		num "$copy" && set_num cbmm_pass_copy_pct "$(awk -v g="$gbs" -v c="$copy" 'BEGIN { printf "%.1f", 100 * g / c }')"
		echo "cBMM pass: $gbs GB/s ($bpc bytes per cell), device copy $copy GB/s, $pct% of $bw_tbs TB/s"
	elif [ "${status[cbmm]}" = pass ]; then
		failed "no cBMM bandwidth figure"
	fi
	end
fi

# fit NAME DATA DEVICE TIMEOUT: jeirt irt fit of DATA's wide CSV to a
# tolerance (1e-10) far below the 1e-6 gap, with its trace; joint maximum
# likelihood (--prior none), the objective the CUDA kernels and the PyTorch
# peer fit.
fit() {
	local o=$work/fit-$1-$3
	if tmo "$cur/jeirt-$3" "$4" "$bin/jeirt" irt fit --data "$2/responses_wide.csv" --format wide --no-cache --device "$3" \
		--prior none --tol 1e-10 --max-iter 1000 --trace "$o.trace.csv" --out "$o" --force >"$o.log" 2>&1; then
		echo "jeirt irt fit $1 on $3: $(tail -1 "$o.trace.csv" | cut -d, -f1) s, $(($(wc -l <"$o.trace.csv") - 1)) iterations, loss $(tail -1 "$o.trace.csv" | cut -d, -f2)"
	else
		local rc=$?
		[ $rc = 124 ] || { failed "jeirt irt fit $1 on $3 (exit $rc)"; tail -5 "$o.log" >&2; }
	fi
}
# torch2pl NAME DATA MAX: the PyTorch peer's Adam fit of the same cells, for
# at most MAX seconds of iterations.
torch2pl() {
	local o=$work/fit-$1-torch
	[ $has_torch = 1 ] || return 0
	tmo "$cur/torch" "$(($3 + 20))" $tp 2pl "$2" --peers "$peers" --device "$dev" --tol 1e-10 --max-iter 100000 --max-seconds "$3" \
		--trace "$o.trace.csv" >"$o.log" 2>&1 || [ $? = 124 ] || failed "PyTorch 2PL fit $1"
	cat "$o.log" >>"$torchlog"
	tail -1 "$o.log" | cut -c1-300
}
# gaps NAME: seconds from each run's first iteration until its loss came
# within 1e-6 (relative) of the lowest loss any run reached (both traces are
# float64 sums); "not reached" otherwise.
gaps() {
	local best s f
	best=$( { for f in "$work"/fit-"$1"-*.trace.csv; do [ -f "$f" ] && awk -F, 'NR > 1 { print $2 }' "$f"; done
		[ -f "$work/fit-$1-torch.log" ] && jget "$work/fit-$1-torch.log" loss; } | sort -g | head -1)
	num "$best" || return
	set_num "fit_${1}_best_loss" "$best"
	for f in "$work"/fit-"$1"-*.trace.csv; do
		[ -f "$f" ] || continue
		local who=${f#"$work/fit-$1-"}
		who=${who%.trace.csv}
		s=$(awk -F, -v best="$best" 'NR == 2 { t0 = $1 } NR > 1 && ($2 - best) / best <= 1e-6 { printf "%.3f", $1 - t0; exit }' "$f")
		local last
		last=$(tail -1 "$f" | awk -F, -v best="$best" '{ printf "%.2g", ($2 - best) / best }')
		echo "$1 $who: ${s:-not reached (gap $last at the end of the run)} s from its first iteration to a relative loss gap of 1e-6"
		if num "$s"; then set_num "fit_${1}_${who}_gap_s" "$s"; else set_str "fit_${1}_${who}_gap_s" "not reached (gap $last)"; fi
	done
}

if begin fit_big "2PL fit, $big, 10% missing: jeirt on $dev, then the PyTorch peer (Adam) on $dev, the same cells" 15; then
	if data big; then
		fit big "$work/big" "$dev" "$(part 0.5)"
		torch2pl big "$work/big" "$(part 0.7)"
		gaps big
	fi
	end
fi

# jeirt_epoch DEVICE TIMEOUT: two epochs of jeirt train on the JE-IRT set;
# the figure is the second (warm) epoch's training seconds.
jeirt_epoch() {
	local d=$work/je o=$work/je-train-$1
	cat >"$o.yaml" <<-YAML
		data: {responses: $d/responses.csv, format: long}
		split: {val: 0.1, test: 0.1, seed: 42, by: cell}
		encoder: {spec: "precomputed:$d/features.npy"}
		model: {dim: ${JE[4]}, hidden: ${JE[3]}, dropout: 0.5}
		train: {epochs: 2, batch_size: 512, lr: 0.001, weight_decay: 0.3, seed: 42, batching: by-question}
		output: $o
	YAML
	if tmo "jeirt_epoch/jeirt-$1" "$2" "$bin/jeirt" train --config "$o.yaml" --force --no-baselines --device "$1" >"$o.log" 2>&1; then
		s=$("$py" -c 'import json,sys; h=json.load(open(sys.argv[1]))["history"]; print(h[-1]["seconds"])' "$o/metrics.json" 2>/dev/null)
		echo "jeirt JE-IRT epoch on $1 (the second, warm): ${s:-?} s"
		set_num "jeirt_epoch_${1}_s" "$s"
	else
		local rc=$?
		[ $rc = 124 ] || { failed "jeirt train --device $1 (exit $rc)"; tail -5 "$o.log" >&2; set_str "jeirt_epoch_${1}_s" fail; }
	fi
}

note_size="${JE[0]} x ${JE[1]}, ${JE[2]}-d inputs, hidden ${JE[3]}, d ${JE[4]}, batches of 512 by question"
if begin jeirt_epoch "JE-IRT: a warm epoch on $dev, $note_size; jeirt, then the PyTorch peer" 15; then
	if data je; then
		jeirt_epoch "$dev" "$(part 0.55)"
		if [ $has_torch = 1 ]; then
			tmo jeirt_epoch/torch "$(allow)" $tp jeirt-epoch "$work/je" --peers "$peers" --device "$dev" --hidden "${JE[3]}" --dim "${JE[4]}" \
				--dropout 0.5 --opt adamw --weight-decay 0.3 --lr 1e-3 --warmup 30 >"$work/je-torch.log" 2>&1 || [ $? = 124 ] || failed "PyTorch JE-IRT epoch"
			cat "$work/je-torch.log" >>"$torchlog"
			tail -1 "$work/je-torch.log" | cut -c1-400
			set_num torch_epoch_${dev}_s "$(jget "$work/je-torch.log" sec_per_epoch)"
		fi
	fi
	end
fi

if begin encoder "encoder throughput, 128 tokens, batch 256, fp32 / tf32 / bf16: jeirt on $dev, then PyTorch (transformers, random weights), one model after another" 15; then
	: >"$work/enc.bench"
	: >"$work/enc-torch.log"
	if [ "$dev" = cuda ]; then
		for m in $models; do
			IFS=: read -r key gname _ <<<"$m"
			[ "$(allow)" -gt 5 ] || { echo "cut short: no time left for jeirt's $key"; mark partial; break; }
			cudatest "encoder/jeirt-$key" "$(part 0.4)" -test.run '^$' -test.bench "EncoderThroughput/$gname/" -test.benchtime 1s -test.timeout 0 -test.v >>"$work/enc.bench" 2>&1 || [ $? = 124 ] || failed "encoder GPU benchmark $key"
		done
	fi
	if [ $has_transformers = 1 ] && [ "$(allow)" -gt 5 ]; then
		eargs=()
		[ "$rehearsal" = 1 ] && eargs=(--batch 4 --length 16 --models minilm --min-seconds 0)
		tmo encoder/torch "$(allow)" $tp encoder --device "$dev" "${eargs[@]}" >"$work/enc-torch.log" 2>&1 || [ $? = 124 ] || echo "PyTorch encoder forwards: exit $? ($(tail -1 "$work/enc-torch.log" | cut -c1-300))"
	fi
	cat "$work/enc.bench" >>"$bench"
	cat "$work/enc-torch.log" >>"$torchlog"
	grep -E '^(Benchmark|--- (SKIP|FAIL))' "$work/enc.bench" | cut -c1-200
	grep '^{' "$work/enc-torch.log" | cut -c1-300
	if [ $has_transformers = 0 ]; then
		echo "PyTorch encoder forwards: skipped (no PyTorch with transformers here)"
		[ "$dev" = cuda ] || { status[encoder]=n/a; not_run_why[encoder]="no GPU and no PyTorch with transformers"; }
	fi
	for m in $models; do
		IFS=: read -r key gname _ <<<"$m"
		for p in fp32 tf32 bf16; do
			g=$(awk -v p="^BenchmarkEncoderThroughput/$gname/$p" '$1 ~ p { for (i = 2; i < NF; i++) if ($(i+1) == "sentences/s") { print $i; exit } }' "$work/enc.bench" 2>/dev/null)
			[ "$dev" = cuda ] && set_num "encoder_${key}_${p}_jeirt_sps" "$g"
			tsps=$("$py" -c 'import json,sys
for l in open(sys.argv[1]):
    if l.startswith("{"):
        d=json.loads(l)
        if d.get("model")==sys.argv[2] and d.get("precision")==sys.argv[3]: print(d["sentences_per_s"])' "$work/enc-torch.log" "$key" "$p" 2>/dev/null)
			set_num "encoder_${key}_${p}_torch_sps" "$tsps"
		done
	done
	end
fi

if begin fit_small "2PL fit, $small, 10% missing, both on $dev" 10; then
	if data small; then
		fit small "$work/small" "$dev" "$(part 0.5)"
		torch2pl small "$work/small" "$(part 0.7)"
		gaps small
	fi
	end
fi

# The bootstrap, sized: a first batch of replicates measures the time of one,
# then as many as fit in the rest of the share (at most 1,000) run.
bootstrap() { # N TIMEOUT OUT
	tmo "bootstrap/$1" "$2" "$bin/jeirt" irt fit --data "$work/small/responses_wide.csv" --format wide --no-cache --device "$dev" \
		--prior none --bootstrap "$1" --out "$3" --force >"$3.log" 2>&1 || { local rc=$?; [ $rc = 124 ] || { failed "bootstrap of $1 on $dev (exit $rc)"; tail -5 "$3.log" >&2; }; return 1; }
	sed -n 's/.*"bootstrap_seconds": *\([0-9.e+-]*\).*/\1/p' "$3/fit.json" | head -1
}
if begin bootstrap "bootstrap at $small on $dev, sized to the share" 10; then
	if data small; then
		first=20
		s1=$(bootstrap $first "$(part 0.4)" "$work/boot1")
		if num "$s1"; then
			n=$(awk -v s="$s1" -v f=$first -v a="$(part 0.7)" -v m="$boot_max" 'BEGIN { n = s > 0 ? int(a / (s / f)) : m; if (n > m) n = m; print n }')
			echo "bootstrap: $first replicates in $s1 s; $n fit in the rest of the share"
			set_num bootstrap_first_s "$s1"
			if [ "$n" -gt "$first" ]; then
				s=$(bootstrap "$n" "$(allow)" "$work/boot")
				if num "$s"; then
					echo "bootstrap on $dev: $n replicates in $s s"
					set_num "bootstrap_${dev}_replicates" "$n"
					set_num "bootstrap_${dev}_s" "$s"
				fi
			else
				set_num "bootstrap_${dev}_replicates" "$first"
				set_num "bootstrap_${dev}_s" "$s1"
			fi
			[ "$n" -lt "$boot_max" ] && { echo "bootstrap: fewer than $boot_max replicates fit in the share"; mark partial; }
		fi
	fi
	end
fi

if [ "$dev" != cuda ]; then
	not_run_why[cpu]="the rehearsal runs on the CPU already"
elif begin cpu "the CPU figures: JE-IRT epoch, 2PL $big, encoder forwards (batch 32)" 15; then
	jeirt_epoch cpu "$(part 0.4)"
	fit big "$work/big" cpu "$(part 0.5)"
	gaps big
	(cd "$work" && JEIRT_BENCH_BATCH=32 tmo cpu/encoder "$(allow)" "$bin/transformer.test" -test.run '^$' \
		-test.bench '^Benchmark(BERTMiniLM|MPNetBase|ModernBERTLarge)$' -test.benchtime 1x -test.timeout 0) >"$work/enc-cpu.bench" 2>&1
	cat "$work/enc-cpu.bench" >>"$bench"
	grep '^Benchmark' "$work/enc-cpu.bench"
	for m in $models; do
		IFS=: read -r key _ cname <<<"$m"
		set_num "encoder_${key}_cpu_sps" "$(awk -v p="^Benchmark$cname" '$1 ~ p { for (i = 2; i < NF; i++) if ($(i+1) == "sentences/s") { print $i; exit } }' "$work/enc-cpu.bench")"
	done
	end
fi

cur=
note "figures"
print_table | tee "$table"
printed=1
exit "$(verdict)"
