#!/usr/bin/env bash
# Derives apt sources that enable Debian's non-free components from the
# sources a machine already has, so that packages such as nvidia-cuda-dev
# install through the same mirror, proxy and keys as everything else.
#
#   scripts/apt-nonfree.sh DIR OUT
#
# reads DIR/sources.list, DIR/sources.list.d/*.list (one-line format) and
# DIR/sources.list.d/*.sources (deb822 format), and writes OUT, a deb822 file
# with one entry per Debian URI and suite that lacks a component among
# non-free, contrib and (from bookworm on) non-free-firmware. Each entry keeps
# the URIs, suite, Signed-By and other options of the entry it comes from and
# lists only the missing components, so apt sees no duplicate targets. Place
# OUT in DIR/sources.list.d/ with a .sources name; OUT itself is skipped when
# DIR is read again.
#
# An entry counts as Debian when its suite is a Debian release (bookworm,
# bookworm-updates, bookworm-security, sid, stable, ...), its components
# include main, and either its Signed-By names a debian-archive keyring or it
# has no Signed-By and the last part of its URI path starts with "debian".
# Third-party repositories (and cdrom: sources) are left alone.
#
# Exit status: 0 when OUT was written; 1 when DIR has no Debian source (OUT
# is not written); 2 when every Debian source already has the components (OUT
# is not written); 3 when OUT could not be written. Sourcing the file defines the function apt_nonfree with the
# same arguments and status, and prints nothing.

# apt_nonfree DIR OUT: see above.
apt_nonfree() {
	local dir=${1:?apt_nonfree: missing DIR} out=${2:?apt_nonfree: missing OUT}
	local files=() f tmp rc
	[ -f "$dir/sources.list" ] && files+=("$dir/sources.list")
	for f in "$dir"/sources.list.d/*.list "$dir"/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		[ "$(basename "$f")" = "$(basename "$out")" ] && continue
		files+=("$f")
	done
	[ ${#files[@]} -gt 0 ] || return 1
	tmp=$(mktemp) || return 3
	rc=0
	awk -f - "${files[@]}" >"$tmp" <<'AWK' || rc=$?
# base: the release a suite belongs to (bookworm-security -> bookworm).
function base(s) {
	sub(/\/+$/, "", s)
	sub(/\/updates$/, "", s)
	sub(/-(updates|security|backports|backports-sloppy|proposed-updates)$/, "", s)
	return s
}
function debian_suite(s) {
	return base(s) ~ /^(jessie|stretch|buster|bullseye|bookworm|trixie|forky|duke|sid|experimental|rc-buggy|stable|testing|unstable|oldstable|oldoldstable)$/
}
# wanted: the components nvidia-cuda-dev and its dependencies come from.
function wanted(s) {
	if (base(s) ~ /^(jessie|stretch|buster|bullseye|oldoldstable)$/)
		return "non-free contrib"
	return "non-free non-free-firmware contrib"
}
function has_word(list, w) {
	return (" " list " ") ~ (" " w " ")
}
function norm(u) {
	sub(/\/+$/, "", u)
	return u
}
# debian_archive: an entry's key or URI says it is Debian's archive.
function debian_archive(uri, signedby, p) {
	if (signedby != "")
		return signedby ~ /debian-archive/
	p = norm(uri)
	sub(/^.*\//, "", p)
	return p ~ /^debian/
}
# add records one entry: its components for every URI and suite, and the
# entry itself where it is a Debian binary source.
function add(where, types, uris, suites, comps, signedby, opts,    nu, u, ns, s, i, j, k) {
	gsub(/[ \t\n]+/, " ", uris)
	gsub(/[ \t\n]+/, " ", suites)
	gsub(/[ \t\n]+/, " ", comps)
	nu = split(uris, u, " ")
	ns = split(suites, s, " ")
	for (i = 1; i <= nu; i++) {
		for (j = 1; j <= ns; j++) {
			k = norm(u[i]) SUBSEP s[j]
			have[k] = have[k] " " comps
			if (!has_word(types, "deb") || u[i] ~ /^cdrom:/ || !has_word(comps, "main"))
				continue
			if (!debian_suite(s[j]) || !debian_archive(u[i], signedby))
				continue
			if (!(k in from)) {
				order[++n] = k
				from[k] = where
				uri[k] = u[i]
				suite[k] = s[j]
				opt[k] = opts
			}
		}
	}
}
# field: the deb822 name of a one-line option.
function field(key,    suffix, parts, np, i, name) {
	suffix = ""
	if (key ~ /\+$/) { suffix = "-Add"; sub(/\+$/, "", key) }
	else if (key ~ /-$/) { suffix = "-Remove"; sub(/-$/, "", key) }
	if (key == "arch") return "Architectures" suffix
	if (key == "lang") return "Languages" suffix
	if (key == "target") return "Targets" suffix
	np = split(key, parts, "-")
	name = ""
	for (i = 1; i <= np; i++)
		name = name (i > 1 ? "-" : "") toupper(substr(parts[i], 1, 1)) substr(parts[i], 2)
	return name suffix
}
function oneline(line,    w, nw, i, k, types, o, opts, signedby, eq, key, val, comps) {
	sub(/#.*/, "", line)
	# Options in brackets may hold spaces: [ arch=amd64 signed-by=/k.gpg ].
	opts = ""
	signedby = ""
	if (match(line, /\[[^]]*\]/)) {
		o = substr(line, RSTART + 1, RLENGTH - 2)
		line = substr(line, 1, RSTART - 1) " " substr(line, RSTART + RLENGTH)
		nw = split(o, w, /[ \t]+/)
		for (i = 1; i <= nw; i++) {
			eq = index(w[i], "=")
			if (eq == 0)
				continue
			key = tolower(substr(w[i], 1, eq - 1))
			val = substr(w[i], eq + 1)
			gsub(/,/, " ", val)
			if (key == "signed-by")
				signedby = val
			opts = opts field(key) ": " val "\n"
		}
	}
	nw = split(line, w, /[ \t]+/)
	i = 1
	if (w[i] == "") i++
	if (w[i] != "deb" && w[i] != "deb-src")
		return
	types = w[i]
	comps = ""
	for (k = i + 3; k <= nw; k++)
		comps = comps " " w[k]
	add(FILENAME ":" FNR, types, w[i + 1], w[i + 2], comps, signedby, opts)
}
function flush(    i, name, types, uris, suites, comps, signedby, opts, enabled) {
	if (nf == 0)
		return
	types = ""; uris = ""; suites = ""; comps = ""; signedby = ""; opts = ""; enabled = "yes"
	for (i = 1; i <= nf; i++) {
		name = tolower(fname[i])
		if (name == "types") types = fval[i]
		else if (name == "uris") uris = fval[i]
		else if (name == "suites") suites = fval[i]
		else if (name == "components") comps = fval[i]
		else if (name == "enabled") enabled = tolower(fval[i])
		else {
			if (name == "signed-by") signedby = fval[i]
			opts = opts fname[i] ":" fraw[i] "\n"
		}
	}
	gsub(/[ \t\n]+/, " ", types)
	if (enabled !~ /no/)
		add(pstart, types, uris, suites, comps, signedby, opts)
	nf = 0
}
FNR == 1 {
	if (nf > 0)
		flush()
	deb822 = FILENAME ~ /\.sources$/
}
!deb822 {
	oneline($0)
	next
}
/^#/ { next }
/^[ \t]*$/ { flush(); next }
/^[ \t]/ {
	if (nf > 0) {
		fraw[nf] = fraw[nf] "\n" $0
		fval[nf] = fval[nf] "\n" $0
	}
	next
}
{
	c = index($0, ":")
	if (c == 0)
		next
	if (nf == 0)
		pstart = FILENAME ":" FNR
	nf++
	fname[nf] = substr($0, 1, c - 1)
	fraw[nf] = substr($0, c + 1)
	fval[nf] = fraw[nf]
	sub(/^[ \t]+/, "", fval[nf])
	sub(/[ \t]+$/, "", fval[nf])
}
END {
	flush()
	if (n == 0)
		exit 1
	written = 0
	for (i = 1; i <= n; i++) {
		k = order[i]
		nw = split(wanted(suite[k]), w, " ")
		missing = ""
		for (j = 1; j <= nw; j++)
			if (!has_word(have[k], w[j]))
				missing = missing (missing == "" ? "" : " ") w[j]
		if (missing == "")
			continue
		if (written++)
			print ""
		print "# derived from " from[k]
		print "Types: deb"
		print "URIs: " uri[k]
		print "Suites: " suite[k]
		print "Components: " missing
		printf "%s", opt[k]
	}
	if (written == 0)
		exit 2
}
AWK
	# Written next to OUT, then renamed: apt never reads half a file.
	if [ "$rc" = 0 ]; then
		if cat "$tmp" >"$out.tmp$$" && chmod 644 "$out.tmp$$" && mv -f "$out.tmp$$" "$out"; then
			rm -f "$tmp"
			return 0
		fi
		rm -f "$out.tmp$$"
		rc=3
	fi
	rm -f "$tmp"
	return "$rc"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	set -u
	if [ $# -ne 2 ]; then
		echo "usage: $0 DIR OUT   (DIR: an apt configuration folder such as /etc/apt)" >&2
		exit 64
	fi
	rc=0
	apt_nonfree "$1" "$2" || rc=$?
	case $rc in
	1) echo "apt-nonfree: no Debian package source in $1/sources.list or $1/sources.list.d/" >&2 ;;
	2) echo "apt-nonfree: the Debian sources in $1 already have non-free; $2 not written" >&2 ;;
	esac
	exit "$rc"
fi
