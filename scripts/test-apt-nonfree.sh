#!/usr/bin/env bash
# Tests scripts/apt-nonfree.sh on sample apt configuration folders: no root,
# no network. Run by `go test ./cmd/jeirt` (TestAptNonfreeScript) and alone:
#
#   bash scripts/test-apt-nonfree.sh
set -euo pipefail
script=$(cd "$(dirname "$0")" && pwd)/apt-nonfree.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0

# check NAME WANT_STATUS WANT_OUT: runs apt-nonfree.sh on $work/NAME and
# compares its exit status, and OUT (absent when WANT_OUT is "-"), with the
# expected ones.
check() {
	local name=$1 want_rc=$2 want=$3 dir=$work/$1 rc=0
	local out=$dir/sources.list.d/jeirt-nonfree.sources
	bash "$script" "$dir" "$out" 2>"$work/$name.err" || rc=$?
	if [ "$rc" != "$want_rc" ]; then
		echo "FAIL $name: exit status $rc, want $want_rc; stderr: $(cat "$work/$name.err")"
		failed=1
		return
	fi
	if [ "$want" = - ]; then
		if [ -e "$out" ]; then
			echo "FAIL $name: wrote $out, want none:"
			cat "$out"
			failed=1
			return
		fi
	elif ! diff -u <(printf '%s\n' "$want") "$out" >"$work/$name.diff"; then
		echo "FAIL $name: derived sources differ (- want, + got):"
		cat "$work/$name.diff"
		failed=1
		return
	fi
	# Nothing but OUT may be left in the folder.
	local left
	left=$(find "$dir" -name 'jeirt-nonfree.sources.tmp*' 2>/dev/null || true)
	if [ -n "$left" ]; then
		echo "FAIL $name: left $left"
		failed=1
		return
	fi
	echo "ok   $name"
}

# A deb822 file with several suites and components, Signed-By, an option,
# comments, a disabled entry and a deb-src-only entry; a derived file from an
# earlier run is ignored.
mkdir -p "$work/deb822/sources.list.d"
cat >"$work/deb822/sources.list.d/debian.sources" <<'EOF'
Types: deb deb-src
# a comment inside the entry
URIs: http://apt.example.invalid/debian/
Suites: bookworm bookworm-updates
Components: main contrib
Architectures: amd64 arm64
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://apt.example.invalid/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://apt.example.invalid/debian
Suites: bookworm-backports
Components: main
Enabled: no
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://apt.example.invalid/debian
Suites: trixie
Components: main
EOF
printf 'Types: deb\nURIs: http://stale.example.invalid/debian\nSuites: sid\nComponents: main\n' \
	>"$work/deb822/sources.list.d/jeirt-nonfree.sources"
check deb822 0 '# derived from '"$work"'/deb822/sources.list.d/debian.sources:1
Types: deb
URIs: http://apt.example.invalid/debian/
Suites: bookworm
Components: non-free non-free-firmware
Architectures: amd64 arm64
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

# derived from '"$work"'/deb822/sources.list.d/debian.sources:1
Types: deb
URIs: http://apt.example.invalid/debian/
Suites: bookworm-updates
Components: non-free non-free-firmware
Architectures: amd64 arm64
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

# derived from '"$work"'/deb822/sources.list.d/debian.sources:9
Types: deb
URIs: http://apt.example.invalid/debian-security
Suites: bookworm-security
Components: non-free non-free-firmware contrib
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg'

# One-line sources.list with [options] (spaces inside the brackets, a
# comma list, arch+=), a proxy URI, an old suite without non-free-firmware,
# and a .list file in sources.list.d without options or a key.
mkdir -p "$work/oneline/sources.list.d"
cat >"$work/oneline/sources.list" <<'EOF'
# the machine's sources
deb [ signed-by=/usr/share/keyrings/debian-archive-keyring.gpg arch=amd64,i386 ] http://proxy.example.invalid:3142/debian bookworm main
deb-src http://proxy.example.invalid:3142/debian bookworm main

deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg check-valid-until=no] http://proxy.example.invalid:3142/debian bullseye main # old
EOF
cat >"$work/oneline/sources.list.d/security.list" <<'EOF'
deb http://proxy.example.invalid:3142/debian-security bookworm-security main contrib
EOF
check oneline 0 '# derived from '"$work"'/oneline/sources.list:2
Types: deb
URIs: http://proxy.example.invalid:3142/debian
Suites: bookworm
Components: non-free non-free-firmware contrib
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
Architectures: amd64 i386

# derived from '"$work"'/oneline/sources.list:5
Types: deb
URIs: http://proxy.example.invalid:3142/debian
Suites: bullseye
Components: non-free contrib
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
Check-Valid-Until: no

# derived from '"$work"'/oneline/sources.list.d/security.list:1
Types: deb
URIs: http://proxy.example.invalid:3142/debian-security
Suites: bookworm-security
Components: non-free non-free-firmware'

# Files that already have non-free: only what is still missing is added, for
# the same URI and suite across both formats; nothing at all when every
# component is there.
mkdir -p "$work/partial/sources.list.d"
cat >"$work/partial/sources.list" <<'EOF'
deb http://apt.example.invalid/debian bookworm main non-free
EOF
cat >"$work/partial/sources.list.d/extra.sources" <<'EOF'
Types: deb
URIs: http://apt.example.invalid/debian/
Suites: bookworm
Components: non-free-firmware
EOF
check partial 0 '# derived from '"$work"'/partial/sources.list:1
Types: deb
URIs: http://apt.example.invalid/debian
Suites: bookworm
Components: contrib'

mkdir -p "$work/complete"
cat >"$work/complete/sources.list" <<'EOF'
deb http://apt.example.invalid/debian bookworm main contrib non-free non-free-firmware
deb http://apt.example.invalid/debian bullseye main contrib non-free
EOF
check complete 2 -

# Third-party repositories are ignored, next to a Debian one: a suite that is
# not a Debian release, a Debian suite without main (Docker's layout), a
# vendor repository with main signed by its own key, and a cdrom.
mkdir -p "$work/thirdparty/sources.list.d"
cat >"$work/thirdparty/sources.list.d/vendors.sources" <<'EOF'
Types: deb
URIs: https://node.example.invalid/node_20.x
Suites: nodistro
Components: main
Signed-By: /usr/share/keyrings/nodesource.gpg

Types: deb
URIs: https://vendor.example.invalid/linux/debian
Suites: bookworm
Components: stable
Signed-By: /etc/apt/keyrings/vendor.asc

Types: deb
URIs: https://vendor.example.invalid/debian/12/prod
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/vendor.gpg
EOF
cat >"$work/thirdparty/sources.list.d/more.list" <<'EOF'
deb https://php.example.invalid/php/ bookworm main
deb cdrom:[Debian GNU/Linux 12]/ bookworm main
deb https://tools.example.invalid/apt cloud-sdk-bookworm main
EOF
check thirdparty 1 -
cat >"$work/thirdparty/sources.list.d/debian.sources" <<'EOF'
Types: deb
URIs: http://apt.example.invalid/debian
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
check thirdparty 0 '# derived from '"$work"'/thirdparty/sources.list.d/debian.sources:1
Types: deb
URIs: http://apt.example.invalid/debian
Suites: trixie
Components: non-free non-free-firmware contrib
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg'

# No sources at all: exit status 1, one line on stderr, nothing written.
mkdir -p "$work/empty/sources.list.d"
check empty 1 -
if [ "$(wc -l <"$work/empty.err")" != 1 ]; then
	echo "FAIL empty: stderr is not one line: $(cat "$work/empty.err")"
	failed=1
fi
mkdir -p "$work/missing"
rmdir "$work/missing"
check missing 1 -

if [ "$failed" != 0 ]; then
	echo "FAIL test-apt-nonfree"
	exit 1
fi
echo "PASS test-apt-nonfree"
