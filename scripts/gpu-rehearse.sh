#!/usr/bin/env bash
# Rehearses the GPU check on a machine without a GPU, as CI runs it:
#
#   1. builds gpu-bundle/ (scripts/gpu-bundle.sh) and checks its size
#      (at most 56 MiB; with the checkout, at most the 64 MiB that travel);
#   2. takes the command to paste from docs/gpu.md (the sh block after the
#      line "<!-- gpu-check command -->") and checks its length (at most
#      2,000 characters);
#   3. copies the bundle alone into a fresh folder and runs that command
#      there under env -i with PATH=/usr/bin:/bin (no Go, no checkout, no
#      ../shared): it must unpack into /tmp, find every file it needs, and stop
#      at the device probe with exit 3 and one line "gpu-check: no CUDA
#      device: ...";
#      The run prints the plan first: every stage's share of the budget,
#      summing to at most 480 s, and the commit the bundle was built from;
#   4. runs the same bundle from a copy of the checkout with
#      GPU_CHECK_CPU_REHEARSAL=1 and a budget of 240 s: the stages at a tiny
#      size on the CPU (the CPU encoder against the fixtures as the
#      correctness stage, data, jeirt train, irt fit and the bootstrap from
#      the bundle's jeirt, the PyTorch peers on the CPU when /usr/bin/python3
#      has torch, the JSON, the summary and the table), one timed command
#      made to overrun its stage's deadline: that stage must be `partial`,
#      the others pass, the exit status 0 and the bundle found to match the
#      checkout;
#   5. runs it once more with its correctness stage made to fail: exit 1, and
#      the summary says so.
#
#   scripts/gpu-rehearse.sh [--no-build]   (--no-build: use gpu-bundle/ as it is)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
start=$SECONDS
[ "${1:-}" = --no-build ] || bash scripts/gpu-bundle.sh
die() { echo "gpu-rehearse: $*" >&2; exit 1; }
[ -f gpu-bundle/payload.tar.xz ] || die "no gpu-bundle/payload.tar.xz"

bundle=$(du -sb gpu-bundle | cut -f1)
# What travels to the GPU machine: tracked and untracked-not-ignored files,
# plus the carried gpu-bundle/.
tree=$(git ls-files -z --cached --others --exclude-standard | xargs -0 -r stat -c %s -- 2>/dev/null | awk '{ s += $1 } END { print s + 0 }')
mib() { awk -v s="$1" 'BEGIN { printf "%.1f MiB", s / 1048576 }'; }
echo "bundle: $(mib "$bundle") (limit 56 MiB); with the checkout ($(mib "$tree")): $(mib $((bundle + tree))) (limit 64 MiB)"
[ "$bundle" -le $((56 * 1048576)) ] || die "the bundle is over 56 MiB"
[ $((bundle + tree)) -le $((64 * 1048576)) ] || die "the checkout and the bundle are over the 64 MiB that travel"

cmd=$(awk '/^<!-- gpu-check command -->/ { f = 1; next } f && /^```/ { if (b) exit; b = 1; next } f && b && !/^# needs:/' docs/gpu.md)
[ -n "$cmd" ] || die "docs/gpu.md has no sh block after <!-- gpu-check command -->"
len=${#cmd}
echo "documented command: $len characters (limit 2,000): $cmd"
[ "$len" -le 2000 ] || die "the documented command is over 2,000 characters"

fresh=$(mktemp -d "${TMPDIR:-/tmp}/jeirt-rehearse.XXXXXX")
trap 'rm -rf "$fresh"' EXIT
cp -r gpu-bundle "$fresh/"
mkdir -p "$fresh/home"
path=/usr/bin:/bin
if env -i PATH=$path bash -c 'command -v go' >/dev/null; then
	die "go is on $path: the rehearsal cannot show that the check runs without Go"
fi
# run DIR NAME ENV...: the documented command in DIR, with nothing of this
# machine's environment but PATH; its output in $fresh/NAME.txt, $OUT $fresh/NAME.
run() {
	local dir=$1 name=$2
	shift 2
	set +e
	(cd "$dir" && env -i PATH=$path HOME="$fresh/home" OUT="$fresh/$name" "$@" bash -c "$cmd") >"$fresh/$name.txt" 2>&1
	rc=$?
	set -e
}

echo "== the documented command, fresh folder, env -i PATH=$path"
run "$fresh" probe
sed 's/^/   | /' "$fresh/probe.txt"
[ "$rc" = 3 ] || die "exit $rc, want 3 (no CUDA device)"
grep -q '^inventory: [0-9]* files present and intact' "$fresh/probe.txt" || die "no inventory line before the probe"
n=$(grep -c '^gpu-check: no CUDA device: ' "$fresh/probe.txt" || true)
[ "$n" = 1 ] || die "$n lines 'gpu-check: no CUDA device', want 1"
[ "$(grep -n '^inventory: ' "$fresh/probe.txt" | cut -d: -f1)" -lt "$(grep -n '^gpu-check: no CUDA device' "$fresh/probe.txt" | cut -d: -f1)" ] || die "the inventory must come before the probe"
! grep -q '^missing: ' "$fresh/probe.txt" || die "the bundle lacks files"
for f in gpu-check.log gpu-check.json; do [ -s "$fresh/probe/$f" ] || die "no $f in \$OUT"; done
grep -q '"device": "none: ' "$fresh/probe/gpu-check.json" || die "gpu-check.json does not record the missing device"
ls /tmp | grep -q '^jeirt-gpu\.' && echo "note: /tmp holds jeirt-gpu.* folders of other runs" || true

# The plan the probe run printed: every stage's share, summing to at most 480 s.
plan_sum=$(awk '/^plan: /{ p = 1; next } p && /^  [a-z_]+ +(correctness|headline|extra) +[0-9]+s/ { s += $3 + 0; n++ } p && !/^  / { p = 0 } END { print n + 0, s + 0 }' "$fresh/probe.txt")
read -r plan_n plan_s <<<"$plan_sum"
echo "plan: $plan_n stages, shares summing to $plan_s s"
[ "$plan_n" -ge 8 ] || die "the probe run printed no plan of the stages (found $plan_n)"
[ "$plan_s" -le 480 ] || die "the stages' shares sum to $plan_s s, over 480"
grep -q '^commit: [0-9a-f]\{40\}' "$fresh/probe.txt" || die "the bundle does not say which commit it was built from"
grep -q '"bundle_commit": "[0-9a-f]\{40\}' "$fresh/probe/gpu-check.json" || die "gpu-check.json does not record the bundle's commit"

# The CPU rehearsal runs from a copy of the checkout (what travels to the GPU
# machine), so that the bundle is compared with it.
co=$fresh/checkout
mkdir -p "$co"
git ls-files -z --cached --others --exclude-standard | xargs -0 -r cp --parents -t "$co" 2>/dev/null || true
cp -r gpu-bundle "$co/"
stage_status() { /usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["stages"][sys.argv[2]]["status"])' "$1" "$2"; }

echo "== the later stages on the CPU at a tiny size (GPU_CHECK_CPU_REHEARSAL=1), budget 240 s, fit_small's jeirt made to overrun"
run "$co" cpu GPU_CHECK_CPU_REHEARSAL=1 GPU_CHECK_BUDGET_S=240 GPU_CHECK_REHEARSE_CUT=fit_small/jeirt-cpu PYTHON=/usr/bin/python3
sed 's/^/   | /' "$fresh/cpu.txt"
[ "$rc" = 0 ] || die "the CPU rehearsal exited $rc, want 0 (its correctness stages passed; a cut stage does not fail the check)"
j=$fresh/cpu/gpu-check.json
need=(jeirt_epoch_cpu_s fit_big_cpu_gap_s bootstrap_cpu_s tests_passed)
if /usr/bin/python3 -c 'import torch, numpy' 2>/dev/null; then
	need+=(torch_epoch_cpu_s)
fi
for k in "${need[@]}"; do
	grep -Eq "\"$k\": [0-9.]+" "$j" || die "$k is not a number in gpu-check.json: $(grep "\"$k\"" "$j" || echo absent)"
done
[ "$(stage_status "$j" fit_small)" = partial ] || die "fit_small, cut short, is $(stage_status "$j" fit_small), want partial"
for st in setup tests fit_big jeirt_epoch bootstrap; do
	s=$(stage_status "$j" $st)
	case $s in pass | partial) ;; *) die "stage $st is $s in the CPU rehearsal" ;; esac
done
grep -q 'cut short: fit_small/jeirt-cpu reached the stage.s deadline' "$fresh/cpu.txt" || die "the cut stage did not say it was cut short"
grep -q 'matches the bundle.s sources' "$fresh/cpu.txt" || die "the bundle was not found to match the checkout it was built from"
grep -q 'CPU REHEARSAL' "$fresh/cpu/gpu-check-table.txt" || die "the CPU rehearsal's table does not say what it is"
sm=$fresh/cpu/gpu-check-summary.txt
[ -s "$sm" ] || die "no gpu-check-summary.txt in \$OUT"
grep -Eq '^  fit_small +extra +partial ' "$sm" || die "the summary does not show fit_small as partial"
grep -q '^exit 0: every correctness stage passed' "$sm" || die "the summary does not give the exit status"

echo "== a failing correctness stage (GPU_CHECK_REHEARSE_FAIL=tests), budget 120 s: exit 1"
run "$co" fail GPU_CHECK_CPU_REHEARSAL=1 GPU_CHECK_BUDGET_S=120 GPU_CHECK_REHEARSE_FAIL=tests PYTHON=/usr/bin/python3
grep -E '^(plan|stage |exit |FAIL)' "$fresh/fail.txt" | sed 's/^/   | /'
[ "$rc" = 1 ] || die "a failed correctness stage gave exit $rc, want 1"
[ "$(stage_status "$fresh/fail/gpu-check.json" tests)" = fail ] || die "the failed stage is not recorded as fail"
grep -q '^exit 1: a correctness stage failed' "$fresh/fail/gpu-check-summary.txt" || die "the summary does not say a correctness stage failed"
for f in "$fresh/probe/gpu-check.json" "$j" "$fresh/fail/gpu-check.json"; do
	/usr/bin/python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$f" || die "$f is not valid JSON"
done
echo "gpu-rehearse: passed in $((SECONDS - start)) s (bundle $(mib "$bundle"), command $len characters, plan $plan_s s of 480)"
