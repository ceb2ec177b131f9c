#!/bin/sh
# The coverage study of jeirt's intervals under a prior (scripts/coverage):
# truths from the default prior's fits of the shipped sets (../shared/data),
# 2PL responses simulated from them, refitted with the default prior; prints
# the coverage of each method's 95% intervals of θ, a and d per shape, and
# the recovery (RMSE) of the default prior against prior none. Skips with a
# note when ../shared/data is absent.
#
#   scripts/coverage.sh [--sets 50] [--boot 10] [--reps 50] [--shapes ...]
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
DATA=${DATA:-$ROOT/../shared/data}
if [ ! -d "$DATA" ]; then
	echo "coverage: no data folder $DATA: skipped"
	exit 0
fi
uptime
start=$(date +%s)
go run ./scripts/coverage --data "$DATA" "$@"
echo "wall $(($(date +%s) - start)) s"
uptime
