#!/bin/sh
# prior-table.sh: held-out log loss of `jeirt irt fit` under its priors (--prior default,
# none, 1PL, a grid of slope/intercept prior sds) and the PyTorch 2PL peer, on every
# response matrix under ../shared/data, 10 seeds of a 10% cell hold-out each.
# Builds jeirt, then runs scripts/prior-table.py (its docstring says the rest); arguments
# go to it, e.g.
#
#   scripts/prior-table.sh --out /tmp/prior-table.csv > /tmp/prior-table.md
#   scripts/prior-table.sh --seeds 3 --datasets swebench-verified,lsat7
#   scripts/prior-table.sh --grid-seeds 3      # grid configs on seeds 1-3 only
#
# JEIRT_BIN: where to build the binary (default a temporary file, removed at the end).
# Needs /usr/bin/python3 with numpy and torch (Debian's python3-numpy, python3-torch).
set -eu
cd "$(dirname "$0")/.."
if [ -n "${JEIRT_BIN:-}" ]; then
	bin=$JEIRT_BIN
else
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	bin=$tmp/jeirt
fi
go build -o "$bin" ./cmd/jeirt
/usr/bin/python3 scripts/prior-table.py --jeirt "$bin" "$@"
