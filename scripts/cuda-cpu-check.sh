#!/usr/bin/env bash
# Runs jeirt's CUDA kernels (cuda/kernels/*.cu) on the CPU, without a GPU or
# CUDA headers (g++ and Go are enough):
#
#   1. the harness tests of packages cuda, cuda/internal/cbmm and
#      cuda/internal/jeirtstep: the batched cBMM and JE-IRT step code on the
#      real kernel sources against train's CPU code (each CUDA thread a
#      fiber), one launch with each CUDA thread an OS thread, the sm_90 launch
#      limits, and the text encoder's GPU forward (BERT, MPNet, ModernBERT,
#      a host gemm standing in for the dense products) against the three
#      fixtures' reference vectors; each package records launches, with
#      inputs and outputs, to a trace of its own, and the traces are joined;
#   2. the replay driver (cuda/internal/harness/replay) built three ways,
#      plain, with ThreadSanitizer, and with AddressSanitizer + UBSan, runs
#      every recorded launch again with each CUDA thread an OS thread and
#      compares the outputs with the recorded ones;
#   3. scripts/ptxas-report.sh, when ptxas is installed: registers and local
#      memory of every kernel of the committed PTX for sm_90 (fails on local
#      memory);
#   4. the device costs of a cBMM iteration and of a JE-IRT epoch, its steps
#      and its validation (launches, host<->device bytes, synchronisations,
#      device memory) at full size, counted by go test -run TestCosts
#      ./cuda/internal/cbmm ./cuda/internal/jeirtstep without running the
#      kernels; for cBMM both the passes of one iteration
#      and a whole accelerated fit as train/irt drives it (per iteration, and
#      once per fit).
#
# Prints one line per kernel and a last line
#   kernels: N, tests: M, races: R, errors: E
# and exits 1 on any failure, race or sanitizer report.
#
# Usage: scripts/cuda-cpu-check.sh
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH=$PATH:/usr/local/go/bin
CXX=${CXX:-g++}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
h=cuda/internal/harness
src="$h/replay/replay.cpp $h/launch.cpp $h/kernels_cbmm.cpp $h/kernels_jeirt.cpp $h/kernels_encoder.cpp"
flags="-std=c++20 -g -Wall -Wno-unknown-pragmas -Wno-unused-parameter -Wno-sign-compare -pthread"
errors=0
races=0
tests=0

# Each package's test binary writes its own trace (one at a time: a trace is
# one process's); the replay reads them joined, one header and every record.
harness_pkgs=(./cuda/ ./cuda/internal/cbmm/ ./cuda/internal/jeirtstep/)
: >"$work/go.log"
for i in "${!harness_pkgs[@]}"; do
	pkg=${harness_pkgs[$i]}
	echo "== JEIRT_STRESS=full go test $pkg -run Harness (the kernels against train's CPU code, every fixture sentence and schedule; records $work/trace-$i.bin)"
	if ! JEIRT_STRESS=full JEIRT_HARNESS_TRACE=$work/trace-$i.bin go test -count=1 -timeout 20m -run 'Harness' -v "$pkg" >"$work/go-$i.log" 2>&1; then
		cat "$work/go-$i.log"
		echo "cuda-cpu-check: the harness tests of $pkg failed" >&2
		errors=$((errors + 1))
	fi
	grep -E '^(--- |ok|FAIL)' "$work/go-$i.log"
	cat "$work/go-$i.log" >>"$work/go.log"
	if [ "$i" = 0 ]; then
		cp "$work/trace-$i.bin" "$work/trace.bin" 2>/dev/null || true
	else
		tail -c +9 "$work/trace-$i.bin" >>"$work/trace.bin" 2>/dev/null || true
	fi
done
gotests=$(grep -c '^--- PASS' "$work/go.log")
tests=$((tests + gotests))

# Three builds of the replay driver. TSan and ASan report to stderr and make
# the process exit non-zero (halt_on_error for UBSan).
declare -A extra=(
	[plain]="-O2"
	[tsan]="-O1 -fsanitize=thread"
	[asan+ubsan]="-O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
)
for kind in plain tsan asan+ubsan; do
	bin=$work/replay-$kind
	echo "== replay ($kind): $CXX ${extra[$kind]}"
	# shellcheck disable=SC2086
	if ! $CXX $flags ${extra[$kind]} -o "$bin" $src; then
		echo "cuda-cpu-check: building the $kind replay failed" >&2
		errors=$((errors + 1))
		continue
	fi
	log=$work/replay-$kind.log
	TSAN_OPTIONS="halt_on_error=0 exitcode=66 report_signal_unsafe=0" ASAN_OPTIONS="detect_leaks=1" \
		"$bin" "$work/trace.bin" >"$log" 2>"$log.err"
	rc=$?
	n=$(grep -c 'WARNING: ThreadSanitizer: data race' "$log.err")
	races=$((races + n))
	san=$(grep -cE 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:|WARNING: ThreadSanitizer' "$log.err")
	if [ "$rc" -ne 0 ] || [ "$san" -ne 0 ]; then
		cat "$log.err" | head -60 >&2
		echo "cuda-cpu-check: replay ($kind) exited $rc with $san sanitizer reports" >&2
		errors=$((errors + 1))
	fi
	if [ "$kind" = plain ]; then
		grep '^kernel ' "$log"
	fi
	tail -1 "$log"
	t=$(tail -1 "$log" | sed -n 's/.*tests: \([0-9]*\).*/\1/p')
	tests=$((tests + ${t:-0}))
done
echo "== scripts/ptxas-report.sh"
if ! scripts/ptxas-report.sh; then
	errors=$((errors + 1))
fi
echo "== go test -run TestCosts ./cuda/internal/cbmm ./cuda/internal/jeirtstep (device costs per cBMM iteration and JE-IRT epoch, counted)"
if ! go test -count=1 -run 'TestCosts' -v ./cuda/internal/cbmm ./cuda/internal/jeirtstep >"$work/costs.log" 2>&1; then
	cat "$work/costs.log"
	echo "cuda-cpu-check: the cost counts failed" >&2
	errors=$((errors + 1))
fi
grep -E '^ *costs_test.go:[0-9]+: ' "$work/costs.log" | sed 's/^ *costs_test.go:[0-9]*: //'
kernels=$(grep -c '^kernel ' "$work/replay-plain.log" 2>/dev/null || echo 0)
want=$(grep -ho '__global__ void [a-z_0-9]*' cuda/kernels/*.cu | sort -u | wc -l)
if [ "$kernels" -ne "$want" ]; then
	# The kernels no replayed test launched. Where the encoder fixtures are
	# absent (no ../shared beside the checkout, no JEIRT_FIXTURES), the
	# encoder's harness tests skip, and its kernels alone may be missing.
	missing=$(comm -23 <(grep -ho '__global__ void [a-z_0-9]*' cuda/kernels/*.cu | awk '{print $3}' | sort -u) \
		<(awk '/^kernel /{print $2}' "$work/replay-plain.log" | sort -u))
	encoder=$(grep -ho '__global__ void [a-z_0-9]*' cuda/kernels/encoder.cu | awk '{print $3}' | sort -u)
	notenc=$(comm -23 <(echo "$missing") <(echo "$encoder") | grep -c . || true)
	if [ -z "${JEIRT_FIXTURES:-}" ] && [ ! -e ../shared/fixtures/tiny-bert/expected.json ] && [ "$notenc" -eq 0 ]; then
		echo "cuda-cpu-check: the replay covered $kernels kernels of $want; not replayed: $(echo $missing) (encoder kernels: their harness tests need the encoder fixtures of ../shared/fixtures, absent here, and skipped)"
	else
		echo "cuda-cpu-check: the replay covered $kernels kernels, cuda/kernels has $want; not replayed: $(echo $missing)" >&2
		errors=$((errors + 1))
	fi
fi
echo "kernels: $kernels, tests: $tests, races: $races, errors: $errors"
[ "$errors" -eq 0 ] && [ "$races" -eq 0 ]
