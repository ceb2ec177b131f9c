#!/bin/bash
# Queue a sharded encoding: the encode.sbatch array (N tasks) and the
# encode-merge.sbatch job that runs after all of them succeed
# (sbatch --dependency=afterok:JOBID).
#
#   INPUT=items.csv OUT_DIR=/scratch/$USER/vectors N=16 ENCODER=/models/all-MiniLM-L6-v2 \
#     scripts/slurm/submit-encode.sh [extra sbatch options, e.g. --partition=cpu --account=abc]
#
# With DEVICE=cuda each shard runs on one GPU (the array job asks for
# --gres=gpu:1; BATCH defaults to 256 there): several GPUs or nodes encode
# one input, and the merge joins them.
#
# Prints the two job ids. Extra options go to both jobs.
#
# jeirt encode --emit slurm --shards N --submit --out DIR does the same from
# jeirt itself and records the jobs in DIR/slurm.json, so that
# "jeirt sweep status DIR" follows them and "jeirt sweep resubmit DIR" submits
# a failed shard again with the merge behind it (docs/cluster.md).
set -euo pipefail

: "${INPUT:?set INPUT to the items CSV}"
: "${OUT_DIR:?set OUT_DIR to the output folder}"
: "${N:?set N to the number of shards}"
if ! [[ "$N" =~ ^[0-9]+$ ]] || (( N < 1 )); then
  echo "submit-encode: N=$N is not a positive number of shards" >&2
  exit 2
fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# Jobs start in the submission folder, but absolute paths survive a cd.
INPUT="$(cd "$(dirname "$INPUT")" && pwd)/$(basename "$INPUT")"
mkdir -p "$OUT_DIR"
OUT_DIR="$(cd "$OUT_DIR" && pwd)"
DEVICE="${DEVICE:-cpu}"
gpu=()
if [[ "$DEVICE" = cuda ]]; then
  gpu=(--gres=gpu:1)
  BATCH="${BATCH:-256}"
  export BATCH
fi
export INPUT OUT_DIR N DEVICE

jobid="$(sbatch --parsable --array=0-$((N - 1)) "${gpu[@]}" "$@" "$here/encode.sbatch")"
jobid="${jobid%%;*}" # --parsable prints "id;cluster" on multi-cluster sites
merge="$(sbatch --parsable --dependency=afterok:"$jobid" "$@" "$here/encode-merge.sbatch")"
merge="${merge%%;*}"
echo "encode: array job $jobid ($N shards into $OUT_DIR), merge job $merge (after all shards succeed)"
