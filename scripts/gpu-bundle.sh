#!/usr/bin/env bash
# Builds gpu-bundle/, everything scripts/gpu-check.sh needs on a GPU machine
# that has no Go and no network, small enough to travel (at most 56 MiB):
#
#   gpu-bundle/gpu-check.sh      the check (a copy of scripts/gpu-check.sh)
#   gpu-bundle/payload.tar.xz    what it unpacks into /tmp:
#       bin/jeirt, bin/jeirt-cuda     the default build and the GPU runner
#       bin/cuda.test                 go test -c -tags jeirtcuda ./cuda/
#       bin/transformer.test          go test -c ./encoder/transformer/ (the CPU encoder benchmarks)
#           (all four built with -trimpath -ldflags='-s -w')
#       cuda/kernels/*.cu, *.ptx      the kernel sources and the PTX the binaries embed, beside
#                                     cuda.test as in a checkout (its harness tests read the .cu)
#       fixtures/tiny-{bert,mpnet,modernbert}   from ../shared/fixtures
#       peers/gen_synth.py, common.py, peer_jeirt_torch.py, peer_2pl_torch.py   from ../shared/bench/peers
#       scripts/gpu_torch_peers.py    the peers on the GPU, the encoders from transformers
#       BUILD                         commit, tree state, date, Go version
#       SOURCES                       sha256 and path of every file of the checkout it was built from
#       NEEDS                         each binary's libraries and the symbol versions it needs of them
#   gpu-bundle/MANIFEST          sha256, size and path of every file in the payload
#
# The payload is compressed with xz (GPU_BUNDLE_XZ, default -9), which the
# check unpacks with python3's lzma module (or xz). Needs Go, the CUDA 11.8
# headers and link stub (scripts/build-cuda.sh installs them when missing)
# and ../shared beside the checkout. Prints the bundle's size; fails above
# GPU_BUNDLE_MAX_MIB (56). Replaces an earlier gpu-bundle/ only if it holds
# a MANIFEST (one this script wrote).
#
#   scripts/gpu-bundle.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export PATH=$PATH:/usr/local/go/bin
max_mib=${GPU_BUNDLE_MAX_MIB:-56}
xz_level=${GPU_BUNDLE_XZ:--9}
stubs=/usr/lib/x86_64-linux-gnu/stubs
shared=$root/../shared
dest=$root/gpu-bundle

for need in "$shared/fixtures/tiny-bert" "$shared/fixtures/tiny-mpnet" "$shared/fixtures/tiny-modernbert" "$shared/bench/peers/gen_synth.py"; do
	[ -e "$need" ] || { echo "gpu-bundle: $need is missing: the bundle carries the fixtures and peers of ../shared" >&2; exit 1; }
done
if [ -e "$dest" ] && [ ! -f "$dest/MANIFEST" ]; then
	echo "gpu-bundle: $dest exists and was not written by this script (no MANIFEST); move it away first" >&2
	exit 1
fi
if [ ! -f /usr/include/cuda.h ] || [ ! -f "$stubs/libcuda.so" ]; then
	echo "gpu-bundle: the CUDA headers are missing; scripts/build-cuda.sh installs them" >&2
	bash scripts/build-cuda.sh
fi

stage=$(mktemp -d "${TMPDIR:-/tmp}/jeirt-bundle.XXXXXX")
trap 'rm -rf "$stage"' EXIT
p=$stage/payload
mkdir -p "$p/bin" "$p/cuda/kernels" "$p/fixtures" "$p/peers" "$p/scripts"

t0=$SECONDS
export CGO_ENABLED=1
export CGO_LDFLAGS="-L$stubs ${CGO_LDFLAGS:-}"
flags=(-trimpath "-ldflags=-s -w")
echo "== go build ${flags[*]} (jeirt, jeirt-cuda, cuda.test, transformer.test)"
go build "${flags[@]}" -o "$p/bin/jeirt" ./cmd/jeirt
go build "${flags[@]}" -tags jeirtcuda -o "$p/bin/jeirt-cuda" ./cmd/jeirt
go test -c "${flags[@]}" -tags jeirtcuda -o "$p/bin/cuda.test" ./cuda/
go test -c "${flags[@]}" -o "$p/bin/transformer.test" ./encoder/transformer/
echo "built in $((SECONDS - t0)) s"
# The GPU binaries need nothing from CUDA but the driver's libcuda.so.1 (cuBLAS
# is dlopened); every binary's newest glibc symbol is printed, since the GPU
# machine's system libraries are not this machine's.
for b in "$p"/bin/*; do
	needed=$(readelf -d "$b" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | tr '\n' ' ')
	case $(basename "$b") in jeirt-cuda | cuda.test)
		case " $needed " in *" libcuda.so.1 "*) ;; *) echo "gpu-bundle: $b does not link libcuda.so.1 (needs: $needed)" >&2; exit 1 ;; esac
		if echo "$needed" | grep -q 'libcudart\|libcublas\|libnvrtc\|libcudnn'; then
			echo "gpu-bundle: $b needs a CUDA toolkit library: $needed" >&2
			exit 1
		fi
		;;
	esac
	# Every symbol version it needs, by library (readelf -V's "Version needs"
	# section): NEEDS, which the check compares with the GPU machine's libraries.
	vers=$(readelf -V "$b" | awk '/^Version needs section/ { on = 1; next } /^Version (symbols|definition)/ { on = 0 }
		on && /File: / { for (i = 1; i <= NF; i++) if ($i == "File:") lib = $(i + 1) }
		on && /Name: / { for (i = 1; i <= NF; i++) if ($i == "Name:") v[lib] = v[lib] (v[lib] == "" ? "" : ",") $(i + 1) }
		END { for (l in v) print l, v[l] }')
	for lib in $needed; do
		printf '%s %s %s\n' "bin/$(basename "$b")" "$lib" "$(echo "$vers" | awk -v l="$lib" '$1 == l { print $2 }' | grep . || echo -)"
	done >>"$stage/NEEDS"
	newest=$(echo "$vers" | tr ' ,' '\n\n' | grep -E '^(GLIBC|GLIBCXX|CXXABI)_' | sort -V | awk -F_ '{ m[$1] = $0 } END { for (k in m) printf "%s ", m[k] }')
	printf '%-18s %5.1f MiB, needs %s(newest: %s)\n' "$(basename "$b")" "$(awk -v s="$(wc -c <"$b")" 'BEGIN { print s / 1048576 }')" "${needed:-nothing} " "${newest:-none}"
done
mv "$stage/NEEDS" "$p/NEEDS"

cp cuda/kernels/*.cu cuda/kernels/*.ptx "$p/cuda/kernels/"
for f in tiny-bert tiny-mpnet tiny-modernbert; do
	cp -r "$shared/fixtures/$f" "$p/fixtures/"
done
chmod -R u+w "$p/fixtures"
for f in gen_synth.py common.py peer_jeirt_torch.py peer_2pl_torch.py; do
	cp "$shared/bench/peers/$f" "$p/peers/"
done
cp scripts/gpu_torch_peers.py "$p/scripts/"
# SOURCES: the sha256 of every file of the checkout the bundle was built from
# (what travels: tracked and untracked-not-ignored files), so that the check
# can say whether the checkout beside it is the same.
git ls-files -z --cached --others --exclude-standard | LC_ALL=C sort -z | while IFS= read -r -d '' f; do
	[ -f "$f" ] && [ ! -L "$f" ] && printf '%s  %s\n' "$(sha256sum "$f" | cut -d' ' -f1)" "$f"
done >"$p/SOURCES"
{
	echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null && [ -z "$(git ls-files --others --exclude-standard)" ] || echo ' (with uncommitted changes)')"
	echo "tree: $(wc -l <"$p/SOURCES") files, sha256 of SOURCES $(sha256sum "$p/SOURCES" | cut -c1-16)"
	echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ) with $(go version | cut -d' ' -f3-)"
} >"$p/BUILD"

new=$stage/gpu-bundle
mkdir -p "$new"
(cd "$p" && find . -type f | sed 's|^\./||' | LC_ALL=C sort | while read -r f; do
	printf '%s %s %s\n' "$(sha256sum "$f" | cut -d' ' -f1)" "$(wc -c <"$f")" "$f"
done) >"$new/MANIFEST"
t0=$SECONDS
echo "== tar | xz $xz_level ($(wc -l <"$new/MANIFEST") files, $(awk '{ s += $2 } END { printf "%.1f", s / 1048576 }' "$new/MANIFEST") MiB)"
# Sorted by name, so that jeirt and jeirt-cuda, mostly the same bytes, sit
# side by side within xz's window.
tar -C "$p" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cf - . | xz "$xz_level" -T1 >"$new/payload.tar.xz"
echo "compressed in $((SECONDS - t0)) s"
cp scripts/gpu-check.sh "$new/"

size=$(du -sb "$new" | cut -f1)
mib=$(awk -v s="$size" 'BEGIN { printf "%.1f", s / 1048576 }')
if [ "$size" -gt $((max_mib * 1048576)) ]; then
	echo "gpu-bundle: $mib MiB, over the limit of $max_mib MiB" >&2
	exit 1
fi
rm -rf "$dest"
mv "$new" "$dest"
echo "gpu-bundle/: $mib MiB (limit $max_mib MiB)"
