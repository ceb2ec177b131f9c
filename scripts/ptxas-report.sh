#!/usr/bin/env bash
# Assembles the committed PTX (cuda/kernels/*.ptx) for the H200 (sm_90) with
# ptxas -v, as the driver's JIT will, and prints one line per kernel:
#
#   file     kernel               registers  local bytes  shared bytes
#
# where local bytes is ptxas's stack frame plus spill stores: per-thread
# local memory, which lives in device memory (through L1/L2) and which no
# kernel should need. Exits 1 when any kernel uses local memory, 0 with a
# note when ptxas is not installed (Debian's nvidia-cuda-toolkit has it).
#
# Exceptions would be listed in allowed (" file/kernel ... "), and printed as
# such; there are none: every kernel, the attention kernel of each head
# size and the cBMM passes of each rank included, keeps to registers and
# shared memory.
#
# Usage: scripts/ptxas-report.sh
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v ptxas >/dev/null; then
	echo "ptxas-report: ptxas not found (apt-get install nvidia-cuda-toolkit); not checked"
	exit 0
fi
allowed=" "
bad=0
printf '%-8s %-22s %9s %12s %13s\n' file kernel registers "local bytes" "shared bytes"
for f in cuda/kernels/*.ptx; do
	out=$(ptxas -v -arch=sm_90 "$f" -o /dev/null 2>&1) || {
		echo "$out" >&2
		echo "ptxas-report: $f does not assemble for sm_90" >&2
		exit 1
	}
	# ptxas prints, per kernel: "Compiling entry function 'k'", then
	# "N bytes stack frame, S bytes spill stores, L bytes spill loads", then
	# "Used R registers[, B bytes smem]".
	rows=$(echo "$out" | awk -v file="$(basename "$f" .ptx)" '
		/Compiling entry function/ { match($0, /'\''[^'\'']*'\''/); k = substr($0, RSTART + 1, RLENGTH - 2) }
		/bytes stack frame/ { stack = $1; spill = $5 }
		/Used [0-9]+ registers/ {
			regs = $0; sub(/.*Used /, "", regs); sub(/ registers.*/, "", regs)
			smem = 0; if (match($0, /[0-9]+ bytes smem/)) { smem = substr($0, RSTART, RLENGTH); sub(/ .*/, "", smem) }
			printf "%-8s %-22s %9d %12d %13d\n", file, k, regs, stack + spill, smem
		}' | sort -k2)
	echo "$rows"
	while read -r file kernel _ local _; do
		[ "$local" = 0 ] && continue
		case "$allowed" in
		*" $file/$kernel "*) echo "ptxas-report: $file/$kernel: $local bytes of local memory (listed exception)" ;;
		*) bad=$((bad + 1)) ;;
		esac
	done <<<"$rows"
done
if [ "$bad" -ne 0 ]; then
	echo "ptxas-report: $bad kernels use local memory (stack frame or spills)" >&2
	exit 1
fi
echo "ptxas-report: every kernel, every cBMM rank and attention head size: 0 bytes of local memory"
