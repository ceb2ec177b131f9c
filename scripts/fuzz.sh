#!/usr/bin/env bash
# Runs every fuzz target of jeirt's readers for SECONDS each (default 10), one
# after another, and stops at the first failure (go test then writes the
# failing input under the package's testdata/fuzz/ to replay as a test).
# FUZZ_PARALLEL sets the fuzzing workers (default: one per CPU).
#
#   scripts/fuzz.sh        # 10 s per target
#   scripts/fuzz.sh 600    # the 10-minute run
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=$PATH:/usr/local/go/bin
secs=${1:-10}
# Go minimizes each new interesting input for up to 60 s by default, which
# stalls short runs on large seeds (configs, tokenizers); FUZZ_MINIMIZE sets it.
minimize=${FUZZ_MINIMIZE:-2s}
parallel=()
[ -n "${FUZZ_PARALLEL:-}" ] && parallel=(-parallel "$FUZZ_PARALLEL")
targets=(
	"./model/read FuzzReadFile"
	"./model/read FuzzReadParquet"
	"./model/read FuzzReadItems"
	"./model/read FuzzReadCache"
	"./model/read/harness FuzzReadLMEval"
	"./model/read/harness FuzzReadHELM"
	"./model/read/harness FuzzReadInspect"
	"./model/read/harness FuzzReadInspectEval"
	"./model/read/harness FuzzReadEEE"
	"./model/tensorfile FuzzParseSafetensors"
	"./model/tensorfile FuzzReadNPY"
	"./model/checkpoint FuzzLoadCheckpoint"
	"./model/checkpoint FuzzParseDomain"
	"./model/irtfit FuzzRead"
	"./model/catfile FuzzReadFiles"
	"./cmd/internal/serve FuzzReadUpstreams"
	"./encoder/tokenizer FuzzLoadTokenizer"
	"./encoder/transformer FuzzEncoderConfig"
	"./encoder/transformer FuzzModulesJSON"
	"./encoder FuzzReadVectors"
	"./encoder FuzzLoadTFIDF"
	"./encoder FuzzReadTexts"
	"./train/pipeline FuzzParseConfig"
	"./cmd/internal/sweeprun FuzzParseSweep"
	"./cmd/internal/sweeprun FuzzReadSweepManifest"
	"./cmd/internal/slurm FuzzReadRecord"
	"./model/checkpoint FuzzParseRunMetrics"
	"./model/routefile FuzzReadCosts"
	"./train/route FuzzRuleSpec"
	"./model/routefile FuzzReadQueries"
	"./train/route FuzzReadRouteCSV"
)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for t in "${targets[@]}"; do
	read -r pkg name <<<"$t"
	echo "== $name ($pkg, ${secs}s)"
	if go test -run '^$' -fuzz "^${name}\$" -fuzztime "${secs}s" -fuzzminimizetime "$minimize" "${parallel[@]}" "$pkg" 2>&1 | tee "$log"; then
		continue
	fi
	# go test -fuzz sometimes ends a short run with "context deadline exceeded"
	# when the time runs out while a worker is still busy (minimizing or on a
	# slow input); no input failed then, and none is written to testdata/fuzz.
	# A real failure names the failing input it wrote.
	if grep -q 'context deadline exceeded' "$log" && ! grep -q 'Failing input written to' "$log"; then
		echo "fuzz: $name ran out of time while a worker was busy; no failing input (not a failure)"
		continue
	fi
	exit 1
done
