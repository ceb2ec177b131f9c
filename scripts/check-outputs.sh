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

base_ref=${1:-f23de9a}
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

base_old_spelling=1
if git merge-base --is-ancestor 67d555e "$base_commit" 2>/dev/null; then
	base_old_spelling=0
fi

data=$root/configs/data/swebench-verified
config=$root/configs/quickstart.yaml

# run_all BIN OUT: every command, each one's stdout+stderr in OUT/log/NAME.txt.
run_all() {
	local bin=$1 out=$2
	local is_base=0
	[[ "$bin" == "${base_bin:-}" ]] && is_base=1
	mkdir -p "$out/log"
	step() {
		local name=$1
		shift
		"$@" >"$out/log/$name.txt" 2>&1 || echo "exit status $?" >>"$out/log/$name.txt"
	}
	# pick BASE_ARG NEW_ARG: the spelling of one argument each binary takes
	# (for a setting renamed between the two: train.step became train.device
	# in 67d555e, so a base from then on takes the new spelling too).
	pick() { if [[ $is_base == 1 && $base_old_spelling == 1 ]]; then echo "$1"; else echo "$2"; fi; }

	# data: inspect, split, parquet; synth.
	step data-inspect "$bin" data inspect "$data/response_matrix.csv" --items "$data/item_content.csv"
	step data-inspect-json "$bin" data inspect --data "$data/response_matrix.csv" --json
	step data-split "$bin" data split --data "$data/response_matrix.csv" --by item --seed 3 --out "$out/split"
	step data-split-models "$bin" data split --data "$data/response_matrix.csv" --by model --seed 3 --out "$out/split-models"
	step data-parquet "$bin" data parquet "$data/response_matrix.csv" "$out/responses.parquet"
	step data-inspect-parquet "$bin" data inspect "$out/responses.parquet"
	step synth-2pl "$bin" synth --kind 2pl --models 30 --items 80 --missing 0.1 --seed 5 --out "$out/synth-2pl"
	step synth-jeirt "$bin" synth --kind jeirt --models 20 --items 60 --dim 16 --embed-dim 4 --seed 5 --out "$out/synth-jeirt"

	# encode: each output format, shards and their merge.
	step encode-npy "$bin" encode --items "$data/item_content.csv" --encoder hash:64 --out "$out/vec.npy"
	step encode-st "$bin" encode --items "$data/item_content.csv" --encoder hash:32 --out "$out/vec.safetensors"
	step encode-jsonl "$bin" encode --items "$data/item_content.csv" --encoder hash:8 --out "$out/vec.jsonl"
	step encode-shard0 "$bin" encode --items "$data/item_content.csv" --encoder hash:16 --shard 0/2 --out "$out/shard0.npy"
	step encode-shard1 "$bin" encode --items "$data/item_content.csv" --encoder hash:16 --shard 1/2 --out "$out/shard1.npy"
	step encode-merge "$bin" encode merge --out "$out/merged.npy" "$out/shard0.npy" "$out/shard1.npy"

	# irt: fit (cbmm, rank 2, lbfgs, mml), select, cv, cat, add-model --fit.
	step irt-fit "$bin" irt fit --data "$data/response_matrix.csv" --items "$data/item_content.csv" \
		--bootstrap 4 --seed 7 --threads 1 --out "$out/fit"
	step irt-fit-r2 "$bin" irt fit --data "$data/response_matrix.csv" --rank 2 --bootstrap 3 --seed 7 \
		--threads 1 --out "$out/fit-r2"
	step irt-fit-lbfgs "$bin" irt fit --data "$data/response_matrix.csv" --method lbfgs --threads 1 --out "$out/fit-lbfgs"
	step irt-fit-mml "$bin" irt fit --data "$data/response_matrix.csv" --method mml --threads 1 --out "$out/fit-mml"
	step irt-fit-batch "$bin" irt fit --data "$data/response_matrix.csv" --data "$out/split/train.csv" --threads 1 --out "$out/fit-batch"
	step irt-select "$bin" irt select --fit "$out/fit" --keep 0.2 --out "$out/kept.csv"
	step irt-select-benchmirt "$bin" irt select --fit "$out/fit" --keep 0.2 --rule benchmirt --bins 5 --out "$out/kept-bm.csv"
	step irt-cv "$bin" irt cv --data "$data/response_matrix.csv" --folds 3 --threads 1 --out "$out/cv.json"
	step irt-cv-json "$bin" irt cv --data "$data/response_matrix.csv" --folds 3 --rank 2 --threads 1 --json
	step irt-fit-held "$bin" irt fit --data "$out/split/train.csv" --threads 1 --out "$out/fit-held"
	step irt-fit-held-models "$bin" irt fit --data "$out/split-models/train.csv" --threads 1 --out "$out/fit-held-models"
	step irt-cat "$bin" irt cat --fit "$out/fit-held-models" --data "$out/split-models/test.csv" --budget 20 --out "$out/cat"
	step irt-cat-eap "$bin" irt cat --fit "$out/fit-held-models" --data "$out/split-models/test.csv" --rule kl --estimator eap \
		--target-se 0.4 --min-items 5
	step irt-cat-next "$bin" irt cat --fit "$out/fit-held" --next 5
	step add-model-fit "$bin" add-model --fit "$out/fit-held-models" --data "$out/split-models/test.csv" --out "$out/placed.csv"

	# train (cell, model and benchmark splits, the fused step), eval.
	local extra=()
	if [[ $is_base == 0 && -n "${JEIRT_CHECK_NEW_SET:-}" ]]; then
		extra=(--set "$JEIRT_CHECK_NEW_SET")
	fi
	step train "$bin" train --config "$config" --set train.epochs=4 --set output="$out/run" "${extra[@]}"
	step train-fused "$bin" train --config "$config" --set train.epochs=3 --set output="$out/run-fused" \
		--set "$(pick train.step=fused train.device=cpu:fused)"
	step train-by-model "$bin" train --config "$config" --set train.epochs=3 --set split.by=model \
		--set split.joint=true --set output="$out/run-by-model" --no-baselines
	step analyze-groups "$bin" analyze groups --data "$data/response_matrix.csv" --rule id-first --out "$out/groups.csv"
	step train-by-benchmark "$bin" train --config "$config" --set train.epochs=3 --set data.items="$out/groups.csv" \
		--set split.by=benchmark --set split.hold=sympy --set output="$out/run-lobo" --no-baselines
	step eval "$bin" eval --checkpoint "$out/run" --data "$data/response_matrix.csv"
	step eval-json "$bin" eval --checkpoint "$out/run" --data "$out/split/test.csv" --items "$data/item_content.csv" --json

	# add-model: onboarding and question suggestion.
	step add-model "$bin" add-model --checkpoint "$out/run" --responses "$data/response_matrix.csv" \
		--models 20231010_rag_claude2,20240402_sweagent_gpt4 --replace --fraction 0.5 --seed 3 \
		--out "$out/plus" --json
	step add-model-text "$bin" add-model --checkpoint "$out/run" --data "$data/response_matrix.csv" \
		--models 20231010_rag_claude2 --replace --fraction 0.5 --prior l2 --out "$out/plus-l2"
	step suggest "$bin" add-model --suggest 8 --checkpoint "$out/run" --out "$out/ask.csv"
	step suggest-random "$bin" add-model --suggest 5 --checkpoint "$out/run" --design random --seed 2 \
		--out "$out/ask-random.csv"
	step suggest-cmd "$bin" add-model suggest 6 --checkpoint "$out/run" --design d-optimal
	# The answers of one model to the first 40 questions, as a long file.
	awk -F, 'NR==1 {for (i=2; i<=41; i++) item[i]=$i; print "model,item,correct"}
		$1=="20231010_rag_claude2" {for (i=2; i<=41; i++) print $1 "," item[i] "," $i}' \
		"$data/response_matrix.csv" >"$out/answered.csv"
	step suggest-round "$bin" add-model --suggest 5 --checkpoint "$out/run" \
		--answered "$out/answered.csv" --models 20231010_rag_claude2 --out "$out/ask-round.csv"

	# route: queries, costs, margins, route eval.
	# Queries: the first lines of a few problem statements.
	awk -F, 'NR>1 && NF>1 && length($2)>20 {print substr($2,1,200)} NR>40 {exit}' \
		"$data/item_content.csv" | tr -d '"' >"$out/queries.txt"
	step route "$bin" route "$out/queries.txt" --checkpoint "$out/run" --top 3
	step route-csv "$bin" route "$out/queries.txt" --checkpoint "$out/run" --output csv \
		--margin 0.05 --train "$data/response_matrix.csv"
	# Costs: 1 + the model's row number / 10.
	awk -F, 'NR>1 {printf "%s,%.1f\n", $1, 1+(NR-1)/10} NR==1 {print "model,cost"}' \
		"$data/response_matrix.csv" >"$out/costs.csv"
	step route-costs "$bin" route "$out/queries.txt" --checkpoint "$out/run" --costs "$out/costs.csv" \
		--min-p 0.6 --output json
	step route-lambda "$bin" route "$out/queries.txt" --checkpoint "$out/run" --costs "$out/costs.csv" \
		--lambda 0.05 --shortlist 5 --data "$data/response_matrix.csv" --output csv
	step route-eval "$bin" route eval --checkpoint "$out/run" --data "$data/response_matrix.csv" \
		--items "$data/item_content.csv" --train "$data/response_matrix.csv" --out "$out/curve.csv"
	step route-eval-costs "$bin" route eval --checkpoint "$out/run" --data "$data/response_matrix.csv" \
		--items "$data/item_content.csv" --train "$data/response_matrix.csv" --costs "$out/costs.csv" \
		--out "$out/curve-costs.csv"

	# analyze: directions, probe, icc, lobo.
	step analyze-directions "$bin" analyze directions --checkpoint "$out/run" --items "$out/groups.csv" --seed 1 \
		--out "$out/directions"
	step analyze-probe "$bin" analyze probe --checkpoint "$out/run" --items "$out/groups.csv" --axis django,sympy \
		--data "$data/response_matrix.csv" --out "$out/probe"
	step analyze-icc "$bin" analyze icc --fit "$out/fit" --out "$out/icc"
	step analyze-lobo "$bin" analyze lobo --out "$out/lobo" "$out/run-lobo"

	# sweep: a Slurm array, a local 2-run grid, its table and dims.
	cat >"$out/sweep.yaml" <<-YAML
		name: check
		base: $config
		grid:
		  model.dim: [4, 8]
		set:
		  train.epochs: 2
		  train.patience: 1
	YAML
	step sweep-slurm "$bin" sweep --config "$out/sweep.yaml" --emit slurm --partition gpu --out "$out/sweep-slurm"
	step sweep-local "$bin" sweep --config "$out/sweep.yaml" --emit local --out "$out/sweep-local"
	step sweep-collect "$bin" sweep collect "$out/sweep-local" --out "$out/sweep-table.csv"
	step analyze-dims "$bin" analyze dims --sweep "$out/sweep-local" --out "$out/dims"

	# report.
	step report "$bin" report --checkpoint "$out/run" --fit "$out/fit" --route-csv "$out/curve-costs.csv" \
		--out "$out/report"

	# serve: every endpoint but the chat forwarding (which needs upstream servers).
	serve_check "$bin" "$out"

	rm -f "$out/queries.txt" "$out/answered.csv" "$out/costs.csv" "$out/sweep.yaml"
}

# serve_check BIN OUT: start jeirt serve on a free port, ask each endpoint,
# record the answers in OUT/log/serve-*.txt, stop it.
serve_check() {
	local bin=$1 out=$2
	local port
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	local url=http://127.0.0.1:$port
	cp -r "$out/run" "$out/serve-ck"
	awk -F, 'NR>1 {printf "%s,%.1f\n", $1, 1+(NR-1)/10} NR==1 {print "model,cost"}' \
		"$data/response_matrix.csv" >"$out/serve-costs.csv"
	JEIRT_CHECK_TOKEN=secret "$bin" serve --checkpoint "$out/serve-ck" --addr "127.0.0.1:$port" \
		--costs "$out/serve-costs.csv" --token-env JEIRT_CHECK_TOKEN >"$out/log/serve-log.txt" 2>&1 &
	local pid=$!
	for _ in $(seq 100); do
		curl -sf "$url/healthz" >/dev/null 2>&1 && break
		sleep 0.1
	done
	local auth=(-H "Authorization: Bearer secret" -H 'Content-Type: application/json')
	ask() { # ask NAME curl-args...
		local name=$1
		shift
		curl -s -w '\nstatus %{http_code}\n' "$@" >"$out/log/serve-$name.txt" 2>&1 || true
	}
	ask healthz "$url/healthz"
	ask route "${auth[@]}" "$url/v1/route" -d '{"text": "Fix the off-by-one error in the pagination helper", "min_p": 0.6}'
	ask route-batch "${auth[@]}" "$url/v1/route" \
		-d '{"queries": [{"id": "a", "text": "sympy simplify fails"}, {"id": "b", "text": "django admin crash"}], "rule": "lambda", "lambda": 0.01}'
	ask route-bad "${auth[@]}" "$url/v1/route" -d '{"text": "x", "rule": "nope"}'
	ask predict "${auth[@]}" "$url/v1/predict" -d '{"pairs": [{"model": "20231010_rag_claude2", "text": "fix the parser"}]}'
	ask models "${auth[@]}" "$url/v1/models"
	ask unauthorized "$url/v1/models"
	ask onboard "${auth[@]}" "$url/v1/models" \
		-d '{"name": "check-model", "cost": 0.3, "answers": [{"id": "django__django-11099", "correct": true}, {"id": "new-1", "text": "Make the cache thread safe", "correct": false}]}'
	ask models-after "${auth[@]}" "$url/v1/models"
	ask reload "${auth[@]}" -X POST "$url/admin/reload"
	ask missing "$url/nowhere"
	curl -s "${auth[@]}" "$url/metrics" | grep -E '^jeirt_[a-z_]+_total' | sed -E 's/[0-9.e+-]+$/N/' \
		>"$out/log/serve-metrics.txt" || true
	kill -TERM "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	# The onboarded checkpoint's folder is named for the time it was written.
	for d in "$out"/serve-ck+*; do
		[[ -d "$d" ]] && mv "$d" "$out/serve-ck-onboarded"
	done
	rm -f "$out/serve-costs.csv"
}

# mask FILE: the text with what legitimately changes from run to run masked.
mask() {
	sed -E \
		-e "s#$scratch/(base|new)#OUT#g" \
		-e "s#$root#ROOT#g" \
		-e 's/[0-9]+(\.[0-9]+)?( ?(ms|µs|us|ns|s)|m|h)\b/DUR/g' \
		-e 's/[0-9.]+(e[+-]?[0-9]+)? *(examples|ex|items|rows|it)\/s/RATE/g' \
		-e 's/[0-9.]+\/s\b/RATE/g' \
		-e 's/[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9:.]+(Z|[+-][0-9:]+)?/DATE/g' \
		-e 's/"([a-z_]*seconds[a-z_]*|[a-z_]*per_sec|elapsed[a-z_]*|wall_s|duration)": *[0-9.e+-]+/"\1": T/g' \
		-e 's/"version": *"[^"]*"/"version": V/g' \
		-e 's/[0-9]{8}T[0-9]{6}Z/STAMP/g' \
		-e 's/127\.0\.0\.1:[0-9]+/127.0.0.1:PORT/g' \
		-e '/deprecated/d' \
		-e '/^cbmm: iteration [0-9]+, loss/d' \
		-e '/^cbmm: iteration [0-9]+, [0-9]+ of [0-9]+ fits/d' \
		"$1" |
		if [[ "$(basename "$1")" == manifest.json ]]; then
			# The hashes of the folder's other files, which hold timings and
			# dates; those files are compared themselves.
			sed -E 's/^( *"[^"]+": )"[0-9a-f]{64}"/\1"SHA256"/'
		elif [[ "$(basename "$1")" == sweep*.csv ]]; then
			# seconds_per_epoch, the second-last column
			sed -E 's/,[0-9.e+-]+,([^,]*)$/,T,\1/'
		else
			cat
		fi
}

# same_tensors A B: two safetensors files hold the same header and bytes but
# for the manifest hash in their metadata (the manifest holds timings).
same_tensors() {
	python3 - "$1" "$2" <<-'PY'
		import re, sys
		def norm(p):
		    b = open(p, "rb").read()
		    return re.sub(rb'"manifest_sha256":"[0-9a-f]{64}"', b'"manifest_sha256":"-"', b)
		sys.exit(0 if norm(sys.argv[1]) == norm(sys.argv[2]) else 1)
	PY
}

echo "running the commands with the BASE binary" >&2
run_all "$base_bin" "$scratch/base"
echo "running the commands with the new binary" >&2
run_all "$scratch/jeirt-new" "$scratch/new"

status=0
ndiff=0
differ() {
	echo "DIFFERS: $1"
	status=1
	ndiff=$((ndiff + 1))
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
	elif [[ "$f" == *.safetensors ]]; then
		same_tensors "$b" "$w" || differ "$f (tensors)"
	elif ! cmp -s "$b" "$w"; then
		differ "$f (binary)"
	fi
done
if [[ $status == 0 ]]; then
	echo "check-outputs: $n files and logs identical to $base_ref (after masking timings, paths, dates)"
else
	echo "check-outputs: $ndiff of $n files and logs differ from $base_ref (see above; timings, paths, dates masked)"
fi
exit $status
