#!/usr/bin/env bash
# check-outputs.sh [BASE_REF]: run the same jeirt commands on the shipped
# SWE-bench data with the binary built at BASE_REF and with the one built from
# the working tree, and compare what they print and what they write.
#
# Timings, rates, paths, dates and the version are masked before comparing.
# Exits 0 when everything matches; otherwise prints each difference and exits 1.
#
# The BASE binary is cached in $JEIRT_CHECK_CACHE (default ~/.cache/jeirt-check),
# keyed by commit. JEIRT_CHECK_KEEP=1 keeps the scratch folder for inspection.
# JEIRT_CHECK_NEW_SET=KEY=VALUE is passed to the new binary's train only (for
# example train.step=fused, to compare with a base whose default step was fused).
set -euo pipefail

base_ref=${1:-c9db996}
root=$(git rev-parse --show-toplevel)
cd "$root"
base_commit=$(git rev-parse --verify "$base_ref^{commit}")
cache=${JEIRT_CHECK_CACHE:-$HOME/.cache/jeirt-check}
mkdir -p "$cache"
scratch=$(mktemp -d "${TMPDIR:-/tmp}/jeirt-check.XXXXXX")
cleanup() {
	if [[ -n "${base_tree:-}" && -d "$base_tree" ]]; then
		git worktree remove --force "$base_tree" >/dev/null 2>&1 || true
	fi
	if [[ "${JEIRT_CHECK_KEEP:-0}" == 1 ]]; then
		echo "scratch kept in $scratch" >&2
	else
		rm -rf "$scratch"
	fi
}
trap cleanup EXIT

base_bin=$cache/jeirt-$base_commit
if [[ ! -x "$base_bin" ]]; then
	base_tree=$scratch/base-tree
	echo "building jeirt at $base_ref ($base_commit)" >&2
	git worktree add --detach --quiet "$base_tree" "$base_commit"
	(cd "$base_tree" && go build -o "$base_bin.tmp" ./cmd/jeirt)
	mv "$base_bin.tmp" "$base_bin"
	git worktree remove --force "$base_tree"
	base_tree=
fi
echo "building jeirt from the working tree" >&2
go build -o "$scratch/jeirt-new" ./cmd/jeirt

data=$root/configs/data/swebench-verified
config=$root/configs/quickstart.yaml

# run_all BIN OUT: every command, each one's stdout+stderr in OUT/log/NAME.txt.
run_all() {
	local bin=$1 out=$2
	mkdir -p "$out/log"
	step() {
		local name=$1
		shift
		"$@" >"$out/log/$name.txt" 2>&1 || echo "exit status $?" >>"$out/log/$name.txt"
	}
	step irt-fit "$bin" irt fit --data "$data/response_matrix.csv" --items "$data/item_content.csv" \
		--bootstrap 4 --seed 7 --threads 1 --out "$out/fit"
	step irt-fit-r2 "$bin" irt fit --data "$data/response_matrix.csv" --rank 2 --bootstrap 3 --seed 7 \
		--threads 1 --out "$out/fit-r2"
	step irt-select "$bin" irt select --fit "$out/fit" --keep 0.2 --out "$out/kept.csv"
	step irt-cv "$bin" irt cv --data "$data/response_matrix.csv" --folds 3 --threads 1 --json "$out/cv.json"
	local extra=()
	if [[ "$bin" != "${base_bin:-}" && -n "${JEIRT_CHECK_NEW_SET:-}" ]]; then
		extra=(--set "$JEIRT_CHECK_NEW_SET")
	fi
	step train "$bin" train --config "$config" --set train.epochs=4 --set output="$out/run" "${extra[@]}"
	step add-model "$bin" add-model --checkpoint "$out/run" --responses "$data/response_matrix.csv" \
		--models 20231010_rag_claude2,20240402_sweagent_gpt4 --replace --fraction 0.5 --seed 3 \
		--out "$out/plus" --json
	step suggest "$bin" add-model --suggest 8 --checkpoint "$out/run" --out "$out/ask.csv"
	step suggest-random "$bin" add-model --suggest 5 --checkpoint "$out/run" --design random --seed 2 \
		--out "$out/ask-random.csv"
	# The answers of one model to the first 40 questions, as a long file.
	awk -F, 'NR==1 {for (i=2; i<=41; i++) item[i]=$i; print "model,item,correct"}
		$1=="20231010_rag_claude2" {for (i=2; i<=41; i++) print $1 "," item[i] "," $i}' \
		"$data/response_matrix.csv" >"$out/answered.csv"
	step suggest-round "$bin" add-model --suggest 5 --checkpoint "$out/run" \
		--answered "$out/answered.csv" --models 20231010_rag_claude2 --out "$out/ask-round.csv"
	# Queries: the first lines of a few problem statements.
	awk -F, 'NR>1 && NF>1 && length($2)>20 {print substr($2,1,200)} NR>40 {exit}' \
		"$data/item_content.csv" | tr -d '"' >"$out/queries.txt"
	step route "$bin" route "$out/queries.txt" --checkpoint "$out/run" --top 3
	step route-csv "$bin" route "$out/queries.txt" --checkpoint "$out/run" --format csv \
		--margin 0.05 --train "$data/response_matrix.csv"
	# Costs: 1 + the model's row number / 10.
	awk -F, 'NR>1 {printf "%s,%.1f\n", $1, 1+(NR-1)/10} NR==1 {print "model,cost"}' \
		"$data/response_matrix.csv" >"$out/costs.csv"
	step route-costs "$bin" route "$out/queries.txt" --checkpoint "$out/run" --costs "$out/costs.csv" \
		--min-p 0.6 --format json
	step route-eval "$bin" route eval --checkpoint "$out/run" --data "$data/response_matrix.csv" \
		--items "$data/item_content.csv" --train "$data/response_matrix.csv" --out "$out/curve.csv"
	step route-eval-costs "$bin" route eval --checkpoint "$out/run" --data "$data/response_matrix.csv" \
		--items "$data/item_content.csv" --train "$data/response_matrix.csv" --costs "$out/costs.csv" \
		--out "$out/curve-costs.csv"
	step report "$bin" report --checkpoint "$out/run" --fit "$out/fit" --route-csv "$out/curve-costs.csv" \
		--out "$out/report"
	rm -f "$out/queries.txt" "$out/answered.csv" "$out/costs.csv"
}

# mask FILE: the text with what legitimately changes from run to run masked.
mask() {
	sed -E \
		-e "s#$scratch/(base|new)#OUT#g" \
		-e "s#$root#ROOT#g" \
		-e 's/[0-9]+(\.[0-9]+)?( ?(ms|µs|us|ns|s)|m|h)\b/DUR/g' \
		-e 's/[0-9.]+(e[+-]?[0-9]+)? *(examples|ex|items|rows|it)\/s/RATE/g' \
		-e 's/[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9:.]+(Z|[+-][0-9:]+)?/DATE/g' \
		-e 's/"([a-z_]*seconds[a-z_]*|[a-z_]*per_sec|elapsed[a-z_]*|wall_s|duration)": *[0-9.e+-]+/"\1": T/g' \
		-e 's/"version": *"[^"]*"/"version": V/g' \
		-e '/deprecated/d' \
		-e '/^cbmm: iteration [0-9]+, loss/d' \
		-e '/^cbmm: iteration [0-9]+, [0-9]+ of [0-9]+ fits/d' \
		"$1"
}

echo "running the commands with the BASE binary" >&2
run_all "$base_bin" "$scratch/base"
echo "running the commands with the new binary" >&2
run_all "$scratch/jeirt-new" "$scratch/new"

status=0
differ() {
	echo "DIFFERS: $1"
	status=1
}
# Every file either side wrote (logs included), compared after masking;
# binary files byte for byte.
files=$( (cd "$scratch/base" && find . -type f; cd "$scratch/new" && find . -type f) | sort -u)
n=0
for f in $files; do
	n=$((n + 1))
	b=$scratch/base/$f
	w=$scratch/new/$f
	if [[ ! -f "$b" ]]; then
		differ "$f: written only by the new binary"
		continue
	fi
	if [[ ! -f "$w" ]]; then
		differ "$f: written only by the BASE binary"
		continue
	fi
	if grep -qI . "$b" 2>/dev/null || [[ ! -s "$b" ]]; then
		if ! d=$(diff <(mask "$b") <(mask "$w")); then
			differ "$f"
			echo "$d" | head -40
		fi
	elif ! cmp -s "$b" "$w"; then
		differ "$f (binary)"
	fi
done
if [[ $status == 0 ]]; then
	echo "check-outputs: $n files and logs identical to $base_ref (after masking timings, paths, dates)"
else
	echo "check-outputs: differences against $base_ref (see above)"
fi
exit $status
