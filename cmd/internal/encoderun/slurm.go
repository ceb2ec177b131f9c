package encoderun

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/jeirt/jeirt/cmd/internal/slurm"
	"github.com/jeirt/jeirt/encoder"
	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/fileio"
)

// Files of an encoding's job folder (EmitSlurm).
const (
	ShardScriptFile = "encode.sbatch"
	MergeScriptFile = "merge.sbatch"
	MergedFile      = "vectors.safetensors"
)

// shardFile is shard k's vectors in the job folder.
func shardFile(k int) string { return fmt.Sprintf("shard-%04d.safetensors", k) }

// EmitSlurm writes the job folder e.Out for a sharded encoding on Slurm:
// encode.sbatch, an array whose task k encodes items k, k+n, ... into
// shard-KKKK.safetensors, and merge.sbatch, which joins the shards into
// vectors.safetensors in the items' order; with e.Submit it submits both,
// the merge with --dependency=afterok on the array, and records the jobs
// (slurm.json), so that jeirt sweep status and resubmit follow them. A
// shard already written is kept, so a task that runs again after it
// finished exits at once.
func (e EncodeFile) EmitSlurm(ctx context.Context) error {
	if e.Emit != "slurm" {
		return model.FieldErrorf("Emit", "encode: {Emit} %q: want slurm", e.Emit)
	}
	if e.Batch < 0 {
		return model.FieldErrorf("Batch", "encode: {Batch} %d: want a positive number of texts per forward pass (default 64)", e.Batch)
	}
	if e.Shards < 1 {
		return model.FieldErrorf("Shards", "encode: {Emit} slurm needs {Shards} N >= 1, got %d", e.Shards)
	}
	if e.Shard != "" {
		return model.FieldErrorf("Shard", "encode: {Shard} encodes one shard here; with {Emit} slurm each array task encodes its own")
	}
	if _, _, err := ParseShard(fmt.Sprintf("0/%d", e.Shards)); err != nil {
		return err
	}
	switch strings.ToLower(filepath.Ext(e.Out)) {
	case ".npy", ".safetensors", ".jsonl":
		return model.FieldErrorf("Out", "encode: with {Emit} slurm, {Out} is the job folder (the vectors go to %s in it), not a %s file", MergedFile, filepath.Ext(e.Out))
	}
	dir, err := filepath.Abs(e.Out)
	if err != nil {
		return err
	}
	items, err := filepath.Abs(e.Items)
	if err != nil {
		return err
	}
	if _, err := os.Stat(items); err != nil {
		return model.FieldErrorf("Items", "encode: {Items} %s: %v", e.Items, err)
	}
	// Each shard encodes at least one item: more shards than items would
	// be tasks with nothing to do (and an array as large as the flag).
	ids, _, err := encoder.ReadTexts(items)
	if err != nil {
		return err
	}
	if e.Shards > len(ids) {
		return model.FieldErrorf("Shards", "encode: {Shards} %d is more than the %d items of %s; each shard encodes at least one item: use {Shards} %d or fewer", e.Shards, len(ids), e.Items, len(ids))
	}
	e.Items = items
	if e.Cache != "" {
		if e.Cache, err = filepath.Abs(e.Cache); err != nil {
			return err
		}
	}
	// The scripts name these paths; each is quoted there, and one that no
	// quoting can hold (a newline) is refused.
	for _, p := range []struct{ field, path string }{{"Out", dir}, {"Items", e.Items}, {"Cache", e.Cache}, {"Spec", e.Spec}} {
		if p.path == "" && p.field != "Out" && p.field != "Items" {
			continue
		}
		if err := slurm.CheckScriptPath(p.field, p.path); err != nil {
			return err
		}
	}
	if st, err := os.Stat(e.Spec); err == nil && st.IsDir() {
		e.Spec, _ = filepath.Abs(e.Spec) // a model folder, read on the nodes
	}
	// A folder replaced (--force) while its jobs run would lose their
	// record, and a new submission would run beside them.
	if err := slurm.CheckIdle(ctx, dir); err != nil {
		return err
	}
	if e.Force {
		if foreign := notJeirts(dir); len(foreign) > 0 {
			return model.FieldErrorf("Force", "encode: %s holds files jeirt did not write (%s), though their names look like jeirt's; {Force} replaces only what jeirt wrote: move them out of the folder or choose another {Out}",
				dir, strings.Join(foreign, ", "))
		}
	}
	a := e.slurmArray(dir)
	err = fileio.WriteDirAtomicLater(dir, e.Force, laterFiles, func(tmp string) error {
		if err := os.MkdirAll(filepath.Join(tmp, "logs"), 0o755); err != nil {
			return err
		}
		for name, text := range map[string]string{ShardScriptFile: e.shardScript(dir), MergeScriptFile: e.mergeScript(dir)} {
			if err := os.WriteFile(filepath.Join(tmp, name), []byte(text), 0o755); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	w := e.Stdout
	if w == nil {
		w = os.Stdout
	}
	fmt.Fprintf(w, "wrote %s (array 0-%d) and %s\n", filepath.Join(dir, ShardScriptFile), e.Shards-1, filepath.Join(dir, MergeScriptFile))
	if !e.Submit {
		fmt.Fprintf(w, "submit: jobid=$(sbatch --parsable %s) && sbatch --dependency=afterok:$jobid %s\n",
			slurm.Arg(filepath.Join(dir, ShardScriptFile)), slurm.Arg(filepath.Join(dir, MergeScriptFile)))
		return nil
	}
	if err := slurm.Submit(ctx, dir, a, w); err != nil {
		return err
	}
	fmt.Fprintf(w, "follow: jeirt sweep status %s\nvectors: %s (when the merge has run)\n", slurm.Arg(dir), filepath.Join(dir, MergedFile))
	return nil
}

func (e EncodeFile) slurmArray(dir string) *slurm.Array {
	return &slurm.Array{What: "shard", Script: ShardScriptFile, Tasks: e.Shards, Done: "shard-{id}.safetensors", Width: 4,
		Check: "file", Output: shardOutput(dir),
		After: &slurm.After{What: "merge", Script: MergeScriptFile, Done: MergedFile, Output: mergeOutput(dir)}}
}

// shardOutput and mergeOutput are the scripts' --output patterns: the
// tasks' logs in the folder's logs/.
func shardOutput(dir string) string {
	return filepath.Join(slurm.Pattern(dir), "logs", "shard-%4a-%A_%a.out")
}

func mergeOutput(dir string) string {
	return filepath.Join(slurm.Pattern(dir), "logs", "merge-%j.out")
}

// quote is s as one word of a bash script.
func quote(s string) string { return slurm.Quote(s) }

// header writes the lines every script of the folder starts with.
// Every #SBATCH line comes before the first command (sbatch stops reading
// them there).
func (e EncodeFile) header(b *strings.Builder, what, name, dir, output string) {
	fmt.Fprintf(b, "#!/bin/bash\n# jeirt encode on Slurm: %s\n# Written by jeirt encode --emit slurm; follow with: jeirt sweep status %s\n", slurm.Comment(what), quote(dir))
	fmt.Fprintf(b, "#SBATCH --job-name=%s\n#SBATCH --nodes=1\n#SBATCH --ntasks=1\n", name)
	if name == "jeirt-encode" {
		fmt.Fprintf(b, "#SBATCH --array=0-%d\n", e.Shards-1)
	}
	cpus := min(runtime.NumCPU(), 8)
	if name == "jeirt-encode-merge" {
		cpus = 1
	}
	fmt.Fprintf(b, "#SBATCH --cpus-per-task=%d\n#SBATCH --mem=8G\n#SBATCH --time=02:00:00\n", cpus)
	if e.Device == "cuda" && name == "jeirt-encode" {
		b.WriteString("#SBATCH --gres=gpu:1\n")
	}
	fmt.Fprintf(b, "#SBATCH --output=%s\n#SBATCH --requeue\n#SBATCH --open-mode=append\nset -euo pipefail\n", slurm.Directive(output))
	b.WriteString("# The Go runtime uses the CPUs Slurm gave the task, not the whole node's.\n")
	b.WriteString("if [[ -n \"${SLURM_CPUS_PER_TASK:-}\" ]]; then export GOMAXPROCS=\"$SLURM_CPUS_PER_TASK\"; fi\n")
	b.WriteString("JEIRT=\"${JEIRT:-jeirt}\"\n")
}

// shardScript is encode.sbatch: task k encodes shard k of e.Shards.
func (e EncodeFile) shardScript(dir string) string {
	var b strings.Builder
	e.header(&b, fmt.Sprintf("array task k encodes shard k of %d of %s", e.Shards, e.Items), "jeirt-encode", dir, shardOutput(dir))
	fmt.Fprintf(&b, "N=%d\n", e.Shards)
	b.WriteString(`task="${SLURM_ARRAY_TASK_ID:?is not set: submit with sbatch, or set it to encode one shard by hand}"
if ! [[ "$task" =~ ^[0-9]+$ ]] || (( 10#$task >= N )); then
  echo "encode: SLURM_ARRAY_TASK_ID=$task is not a shard of N=$N (0 to $((N - 1)))" >&2
  exit 2
fi
task=$((10#$task))
`)
	fmt.Fprintf(&b, "shard=%s/shard-$(printf '%%04d' \"$task\").safetensors\n", quote(dir))
	b.WriteString(`if [[ -f "$shard" && -z "${JEIRT_FORCE:-}" ]]; then
  echo "encode: shard $task is already done (set JEIRT_FORCE=1 to encode it again)" >&2
  exit 0
fi
echo "encode: shard $task of $N (job ${SLURM_JOB_ID:-none}, attempt $((${SLURM_RESTART_COUNT:-0} + 1))) on $(hostname)" >&2
`)
	args := []string{"encode", "--encoder", quote(e.Spec), "--items", quote(e.Items), "--out", `"$shard"`, "--shard", `"$task/$N"`,
		"--batch", fmt.Sprint(cmp.Or(e.Batch, 64)), "--device", quote(deviceOr(e.Device)), "--force"}
	if e.Cache != "" {
		args = append(args, "--cache", quote(e.Cache))
	}
	if e.Precision != "" && e.Precision != "fp32" {
		args = append(args, "--precision", quote(e.Precision))
	}
	fmt.Fprintf(&b, "exec \"$JEIRT\" %s\n", strings.Join(args, " "))
	return b.String()
}

func deviceOr(d string) string {
	if d == "" {
		return "cpu"
	}
	return d
}

// mergeScript is merge.sbatch: the shards joined in the items' order.
func (e EncodeFile) mergeScript(dir string) string {
	var b strings.Builder
	e.header(&b, fmt.Sprintf("joins the %d shards of encode.sbatch into %s", e.Shards, MergedFile), "jeirt-encode-merge", dir, mergeOutput(dir))
	fmt.Fprintf(&b, "dir=%s\nN=%d\nshards=()\n", quote(dir), e.Shards)
	b.WriteString("echo \"encode merge: $N shards (job ${SLURM_JOB_ID:-none}) on $(hostname)\" >&2\n")
	b.WriteString(`for ((i = 0; i < N; i++)); do
  s="$dir/shard-$(printf '%04d' "$i").safetensors"
  if [[ ! -f "$s" ]]; then
    echo "encode merge: error: shard $i of $N is missing ($s)" >&2
    exit 1
  fi
  shards+=("$s")
done
`)
	fmt.Fprintf(&b, "exec \"$JEIRT\" encode merge --items %s --out \"$dir/%s\" --force \"${shards[@]}\"\n", quote(e.Items), MergedFile)
	return b.String()
}
