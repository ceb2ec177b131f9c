#!/usr/bin/env bash
# Builds jeirt with the GPU backend and the CUDA test binary, on a machine
# without a GPU, for scripts/gpu-check.sh to run on one:
#
#   bin/jeirt-cuda   go build -tags jeirtcuda ./cmd/jeirt (the GPU runner)
#   bin/jeirt        the default build, which starts anywhere and runs
#                    --device cuda|auto commands in the jeirt-cuda beside it
#   bin/cuda.test    go test -tags jeirtcuda -c ./cuda/
#   bin/transformer.test  go test -c ./encoder/transformer/ (the CPU encoder
#                    benchmarks that gpu-check.sh runs beside the GPU ones)
#
# The build needs the CUDA 11.8 headers and the libcuda link stub (Debian's
# nvidia-cuda-dev, in the non-free component), not nvcc: the kernels' PTX is
# committed. When they are missing this script installs them with apt-get
# (as root), enabling non-free for that one install from the machine's own
# Debian sources (scripts/apt-nonfree.sh). The binaries need only
# libcuda.so.1 from the NVIDIA driver where they run.
#
# Usage: scripts/build-cuda.sh [--vet]   (--vet also runs go vet -tags jeirtcuda ./...
# and scripts/ptxas-report.sh: registers and local memory per kernel)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=$PATH:/usr/local/go/bin

stubs=/usr/lib/x86_64-linux-gnu/stubs

retry() { # retry N cmd...: run cmd up to N times, 10 s apart
	local n=$1 i
	shift
	for ((i = 1; i <= n; i++)); do
		"$@" && return 0
		echo "build-cuda: attempt $i of $n failed: $*" >&2
		((i < n)) && sleep 10
	done
	return 1
}

install_headers() {
	if [ "$(id -u)" != 0 ]; then
		echo "build-cuda: /usr/include/cuda.h or $stubs/libcuda.so is missing; run as root to install nvidia-cuda-dev, or install it yourself" >&2
		exit 1
	fi
	# non-free (and contrib, non-free-firmware) for this one install, from the
	# machine's own Debian sources: same mirror or proxy, suites and keys.
	local src=/etc/apt/sources.list.d/jeirt-nonfree.sources rc=0
	. scripts/apt-nonfree.sh
	apt_nonfree /etc/apt "$src" || rc=$?
	case $rc in
	0) trap "rm -f '$src'; apt-get update -q || true" EXIT ;;
	1)
		echo "build-cuda: no Debian package source in /etc/apt/sources.list or /etc/apt/sources.list.d/ to enable non-free from; not installing nvidia-cuda-dev" >&2
		exit 1
		;;
	2) ;; # non-free is enabled already
	*)
		echo "build-cuda: could not write $src" >&2
		exit 1
		;;
	esac
	echo "build-cuda: installing nvidia-cuda-dev (CUDA 11.8 headers and link stub, about 1.5 GB)" >&2
	retry 3 apt-get update -q
	retry 3 env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends nvidia-cuda-dev
	if [ "$rc" = 0 ]; then
		trap - EXIT
		rm -f "$src"
		apt-get update -q || true
	fi
}

if [ ! -f /usr/include/cuda.h ] || [ ! -f "$stubs/libcuda.so" ]; then
	install_headers
fi

export CGO_ENABLED=1
export CGO_LDFLAGS="-L$stubs ${CGO_LDFLAGS:-}"
mkdir -p bin
if [ "${1:-}" = --vet ]; then
	echo "== go vet -tags jeirtcuda ./..."
	go vet -tags jeirtcuda ./...
	echo "== scripts/ptxas-report.sh (ptxas -v, sm_90: registers and local memory per kernel)"
	scripts/ptxas-report.sh
fi
if command -v ptxas >/dev/null; then
	# The committed PTX must assemble for the H200 (sm_90), as the driver's JIT will.
	for f in cuda/kernels/*.ptx; do
		echo "== ptxas -arch=sm_90 $f"
		ptxas -arch=sm_90 "$f" -o /dev/null
	done
fi
echo "== go build -tags jeirtcuda -o bin/jeirt-cuda ./cmd/jeirt"
go build -tags jeirtcuda -o bin/jeirt-cuda ./cmd/jeirt
echo "== go build -o bin/jeirt ./cmd/jeirt"
go build -o bin/jeirt ./cmd/jeirt
echo "== go test -tags jeirtcuda -c -o bin/cuda.test ./cuda/"
go test -tags jeirtcuda -c -o bin/cuda.test ./cuda/
echo "== go test -c -o bin/transformer.test ./encoder/transformer/"
go test -c -o bin/transformer.test ./encoder/transformer/
# The GPU binaries must need nothing from CUDA but the driver's libcuda.so.1.
for b in bin/jeirt-cuda bin/cuda.test; do
	needed=$(readelf -d "$b" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | tr '\n' ' ')
	case " $needed " in
	*" libcuda.so.1 "*) ;;
	*) echo "build-cuda: $b does not link libcuda.so.1 (needs: $needed)" >&2; exit 1 ;;
	esac
	if echo "$needed" | grep -q 'libcudart\|libcublas\|libnvrtc\|libcudnn'; then
		echo "build-cuda: $b needs a CUDA toolkit library: $needed" >&2
		exit 1
	fi
	echo "$b: needs $needed"
done
echo "build-cuda: done; copy the tree with bin/ to the GPU machine and run scripts/gpu-check.sh there"
