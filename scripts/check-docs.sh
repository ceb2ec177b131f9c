#!/usr/bin/env bash
# check-docs.sh: run every jeirt command documented in README.md and docs/*.md.
#
#   scripts/check-docs.sh          build jeirt, run the commands, fail on the first failure
#   scripts/check-docs.sh --list   only print the commands it would run (and the skipped blocks)
#   scripts/check-docs.sh --fix    rewrite the generated layout table of docs/development.md
#   CHECK_DOCS_FILES="README.md docs/serve.md" scripts/check-docs.sh   only those files' commands
#
# Before the commands it checks what the docs say about the code: the layout
# table of docs/development.md must be what `go run ./scripts/layout table`
# gives (the packages' doc comments and imports), every backticked pkg.Name
# of README.md and docs/*.md must exist (`layout apinames`), no package
# may be past the size limits (`layout limits`), no import may point up
# a floor (`layout imports`), every doc comment of a func, method or type
# must begin with the name it documents (`layout comments`), and docs/cli
# must be what the commands give
# (`jeirt docs --check docs/cli`, which also fails when a flag has no meaning
# in the flag table or one name has two kinds of value).
#
# It reads the fenced ```sh blocks, in file order (README.md first, then docs/*.md
# by name), and takes every line that starts with `jeirt `, `./jeirt ` or
# `go run ./cmd/jeirt` (or pipes into jeirt: `echo ... | jeirt route -`), the
# lines that make inputs for them (starting with printf, echo, awk, mkdir
# or cp), `go run ./scripts/fake-upstream`, `curl` and `export`; a line ending
# in a backslash continues on the next. A line ending in `&` runs in the
# background until its block ends (then it and its children are stopped); an
# `export` line sets the variable for the lines after it; curl runs with
# --fail-with-body, so an HTTP error fails the check. So that two checks on
# one machine do not collide, the service's address 127.0.0.1:8080 and the
# fake upstream's 127.0.0.1:9000 are replaced by free ports (a `jeirt serve`
# without --addr gets one). A block with a comment line
# `# needs: WHAT` (gpu, slurm, shared, network, model, long) is skipped and
# counted. A block right after a line `<!-- check-docs: twice -->` runs
# twice, all its commands and then all again: what a user may run again
# (README's list of commands) must not fail on its own outputs.
# A plain block after `<!-- check-docs: output -->` is a transcript whose
# quoted output is checked (see transcripts below). Each command runs from a scratch folder holding a copy of configs/
# and scripts/, with a freshly built jeirt first on PATH, under a timeout
# (CHECK_DOCS_TIMEOUT seconds, default 300). The check fails when a command
# fails, or when an argument that names an input file (a path that is not the
# value of an output flag) does not exist before the command runs.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export PATH=$PATH:/usr/local/go/bin
timeout_s=${CHECK_DOCS_TIMEOUT:-300}
list=false
[ "${1:-}" = "--list" ] && list=true
fix=false
[ "${1:-}" = "--fix" ] && fix=true

files=(README.md)
for f in docs/*.md; do files+=("$f"); done
# CHECK_DOCS_FILES="README.md docs/serve.md" runs those files' commands only.
if [ -n "${CHECK_DOCS_FILES:-}" ]; then read -r -a files <<<"$CHECK_DOCS_FILES"; fi

# Extract: one record per command, "FILE:LINE<TAB>COMMAND"; skipped blocks
# as "SKIP<TAB>FILE:LINE<TAB>WHAT".
extract() {
	awk '
	function flush() {
		if (!skip) for (i = 1; i <= n; i++) print cmds[i]
		if (!skip && twice) for (i = 1; i <= n; i++) { c = cmds[i]; sub(/\t/, " (run again)\t", c); print c }
		if (skip) print "SKIP\t" bfile ":" bline "\t" what
		n = 0; skip = 0; what = ""
	}
	FNR == 1 { inblock = 0; again = 0 }
	!inblock && /<!-- *check-docs: *twice *-->/ { again = 1; next }
	/^[ \t]*```/ {
		if (!inblock) {
			nblock++
			if ($0 ~ /^[ \t]*```(sh|bash|shell)[ \t]*$/) { inblock = 1; bfile = FILENAME; bline = FNR; n = 0; skip = 0; cont = ""; twice = again; again = 0 }
			else inblock = 2
		} else {
			if (inblock == 1) flush()
			inblock = 0
		}
		next
	}
	inblock == 1 {
		line = $0
		sub(/^[ \t]+/, "", line)
		if (line ~ /^# *needs:/) { skip = 1; w = line; sub(/^# *needs: */, "", w); what = what (what == "" ? "" : ",") w; next }
		if (cont != "") {
			cmd = cont " " line
		} else {
			cmd = line; start = FNR
		}
		if (cmd ~ /\\$/) { sub(/\\$/, "", cmd); cont = cmd; next }
		cont = ""
		if (cmd ~ /^(\.\/)?jeirt / || cmd ~ /^go run \.\/cmd\/jeirt/ || cmd ~ /\| *(\.\/)?jeirt / || cmd ~ /^(printf|echo|awk|mkdir|cp|curl|export) / ||
			cmd ~ /^go run \.\/scripts\/fake-upstream/) {
			cmds[++n] = FILENAME ":" start "\t" cmd "\t" nblock
		}
	}
	' "${files[@]}"
}

# Transcripts: a plain ``` block right after a line
# `<!-- check-docs: output -->` holds `$ jeirt ...` lines, each followed by
# lines of what it prints (`...` for lines left out). Each command runs after
# the sh blocks (in the same scratch folder), and every line quoted must be a
# line of what it printed (trailing blanks aside). One record per line:
# "CMD<TAB>FILE:LINE<TAB>COMMAND" or "OUT<TAB>FILE:LINE<TAB>LINE".
transcripts() {
	awk '
	FNR == 1 { inblock = 0; mark = 0; cont = "" }
	!inblock && /<!-- *check-docs: *output *-->/ { mark = 1; next }
	/^[ \t]*```/ {
		if (!inblock) { inblock = (mark && $0 ~ /^[ \t]*```[ \t]*$/) ? 1 : 2; mark = 0 } else inblock = 0
		next
	}
	inblock == 1 {
		line = $0
		if (cont == "" && line !~ /^\$ /) { sub(/[ \t]+$/, "", line); print "OUT\t" FILENAME ":" FNR "\t" line; next }
		if (cont == "") { start = FNR; line = substr(line, 3) }
		cmd = cont (cont == "" ? "" : " ") line
		if (cmd ~ /\\$/) { sub(/\\$/, "", cmd); cont = cmd; next }
		cont = ""
		print "CMD\t" FILENAME ":" start "\t" cmd
	}
	' "${files[@]}"
}

records=$(extract)
quoted=$(transcripts)
if $list; then
	printf '%s\n' "$records"
	[ -n "$quoted" ] && printf '%s\n' "$quoted"
	exit 0
fi

# layout_doc FILE TABLE: FILE with the lines between the layout markers
# replaced by TABLE's.
layout_doc() {
	awk -v tf="$2" '
	/<!-- layout:begin/ { print; while ((getline l < tf) > 0) print l; skip = 1; next }
	/<!-- layout:end/ { skip = 0 }
	!skip' "$1"
}
table=$(mktemp)
go run ./scripts/layout table >"$table"
if $fix; then
	layout_doc docs/development.md "$table" >docs/development.md.tmp
	mv docs/development.md.tmp docs/development.md
	rm -f "$table"
	echo "check-docs: wrote the layout table of docs/development.md"
	exit 0
fi
if ! diff -u docs/development.md <(layout_doc docs/development.md "$table") >&2; then
	rm -f "$table"
	echo "check-docs: docs/development.md's layout table is stale; run scripts/check-docs.sh --fix" >&2
	exit 1
fi
rm -f "$table"
go run ./scripts/layout apinames README.md docs/*.md
# docs/cli (every command's page and flags.md, the table of every flag with
# its one meaning) must be what the commands give.
go run ./cmd/jeirt docs --check docs/cli
if ! limits=$(go run ./scripts/layout limits 2>&1); then
	echo "$limits" >&2
	exit 1
fi
go run ./scripts/layout imports
go run ./scripts/layout comments

tmp=$(mktemp -d)
echo "== building jeirt"
go build -o "$tmp/bin/jeirt" ./cmd/jeirt
go build -o "$tmp/bin/fake-upstream" ./scripts/fake-upstream
work=$tmp/work
mkdir -p "$work"
cp -r configs scripts "$work/"
export PATH=$tmp/bin:$PATH
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
serve_port=$(free_port)
upstream_port=$(free_port)

# Background jobs of the current block: started by this script in their own
# process group, stopped (the group) when the block ends or the script exits.
bg_pids=()
stop_background() {
	local pid
	for pid in "${bg_pids[@]}"; do
		kill -TERM -- "-$pid" 2>/dev/null || true
	done
	for pid in "${bg_pids[@]}"; do
		wait "$pid" 2>/dev/null || true
	done
	bg_pids=()
}
trap 'stop_background; rm -rf "$tmp"' EXIT

# Flags whose value is an output or not a path (it need not exist yet).
is_output_flag() {
	case "$1" in
	--out | --trace | --cache | --addr | --token-env | --partition | --time | --set | --name | --models | --default | --encoder | --design | --shard) return 0 ;;
	esac
	return 1
}

ran=0 skipped=0 blocks=0 block=""
while IFS=$'\t' read -r where cmd extra; do
	if [ "$where" = SKIP ]; then
		blocks=$((blocks + 1))
		echo "-- skip block $cmd (needs: $extra)"
		continue
	fi
	if [ "$extra" != "$block" ]; then
		stop_background
		block=$extra
	fi
	cmd=${cmd//.\/jeirt /jeirt }
	cmd=${cmd//go run .\/cmd\/jeirt/jeirt}
	cmd=${cmd//go run .\/scripts\/fake-upstream/fake-upstream}
	cmd=${cmd//127.0.0.1:8080/127.0.0.1:$serve_port}
	cmd=${cmd//127.0.0.1:9000/127.0.0.1:$upstream_port}
	if [[ $cmd == jeirt\ serve\ * ]] && [[ $cmd != *--addr* ]]; then
		cmd="jeirt serve --addr 127.0.0.1:$serve_port ${cmd#jeirt serve }"
	fi
	if [[ $cmd == curl\ * ]]; then
		cmd="curl --fail-with-body ${cmd#curl }"
	fi
	if [[ $cmd == export\ * ]]; then
		echo "-- $where: $cmd"
		eval "$cmd"
		continue
	fi
	background=false
	if [[ $cmd =~ [^\&]\&[[:space:]]*$ ]]; then
		background=true
		cmd=${cmd%&*}
	fi
	# The arguments of the jeirt part (after the last pipe), comments dropped.
	part=${cmd##*| }
	toks=()
	if [[ $part == jeirt\ * ]]; then
		eval "toks=( $part
)"
	fi
	prev="" sub="${toks[1]:-} ${toks[2]:-}" last=$((${#toks[@]} - 1))
	for i in "${!toks[@]}"; do
		t=${toks[$i]}
		if [ "$i" -gt 0 ] && [[ $t != -* ]] && [[ $t != *=* ]] && ! is_output_flag "$prev" &&
			{ [[ $t == */* ]] || [[ $t =~ \.(csv|tsv|yaml|yml|json|jsonl|npy|txt|parquet|gz|safetensors)$ ]]; } &&
			! { [ "$sub" = "data parquet" ] && [ "$i" -eq "$last" ]; }; then
			if [ ! -e "$work/$t" ] && [ ! -e "$t" ]; then
				echo "FAIL $where: $t does not exist (in: $cmd)" >&2
				exit 1
			fi
		fi
		prev=$t
	done
	if $background; then
		echo "-- $where: $cmd& (in the background until the block ends)"
		log="$tmp/bg.${#bg_pids[@]}.log"
		(cd "$work" && exec setsid bash -c "exec $cmd" >"$log" 2>&1) &
		bg_pids+=($!)
		ran=$((ran + 1))
		continue
	fi
	echo "-- $where: $cmd"
	if ! (cd "$work" && timeout "$timeout_s" bash -o pipefail -c "$cmd" >"$tmp/log" 2>&1); then
		tail -20 "$tmp/log" >&2
		for f in "$tmp"/bg.*.log; do
			[ -e "$f" ] && { echo "(a background job said:)" >&2; tail -20 "$f" >&2; }
		done
		echo "FAIL $where: $cmd" >&2
		exit 1
	fi
	ran=$((ran + 1))
done <<<"$records"
stop_background
# The transcripts' commands, each output checked line by line.
lines=0
while IFS=$'\t' read -r kind where text; do
	[ -n "$kind" ] || continue
	if [ "$kind" = CMD ]; then
		cmd=$text
		echo "-- $where (quoted output): $cmd"
		if ! (cd "$work" && timeout "$timeout_s" bash -o pipefail -c "$cmd" 2>&1 | sed 's/[ \t]*$//' >"$tmp/said"); then
			tail -20 "$tmp/said" >&2
			echo "FAIL $where: $cmd" >&2
			exit 1
		fi
		ran=$((ran + 1))
		continue
	fi
	[ "$text" = "..." ] && continue
	if ! grep -qxF -- "$text" "$tmp/said"; then
		echo "FAIL $where: the docs quote a line the command above did not print:" >&2
		echo "  $text" >&2
		echo "(it printed:)" >&2
		head -40 "$tmp/said" >&2
		exit 1
	fi
	lines=$((lines + 1))
done <<<"$quoted"
echo "check-docs: $ran commands ran and passed ($lines quoted output lines matched); $blocks blocks skipped (marked # needs:)"
