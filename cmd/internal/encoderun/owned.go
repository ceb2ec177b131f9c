package encoderun

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"

	"github.com/jeirt/jeirt/cmd/internal/slurm"
)

// laterFiles are the files an encoding's job folder gets after it is
// written (path.Match patterns for its marker): the record, the shards,
// the merged vectors and the tasks' logs.
var laterFiles = []string{slurm.RecordFile, "shard-*.safetensors", MergedFile, "logs", "logs/shard-*.out", "logs/merge-*.out"}

var (
	shardLogRE  = regexp.MustCompile(`^shard-([0-9]{4,})-([0-9]+)_([0-9]+)\.out$`)
	mergeLogRE  = regexp.MustCompile(`^merge-([0-9]+)\.out$`)
	shardFileRE = regexp.MustCompile(`^shard-[0-9]{4,}\.safetensors$`)
)

// notJeirts lists, as slash paths relative to the job folder dir, the
// files there that a marker's patterns (this release's or an older one's
// logs/*) would count as jeirt's but that jeirt did not write: anything in
// logs/ that is not a log of the folder's jobs (its job in the record, or
// the line its script prints first), and shard files not named as jeirt
// names them.
func notJeirts(dir string) []string {
	var foreign []string
	ids := slurm.JobIDs(dir)
	logs, _ := os.ReadDir(filepath.Join(dir, "logs"))
	for _, e := range logs {
		p := filepath.Join(dir, "logs", e.Name())
		ok := false
		if m := shardLogRE.FindStringSubmatch(e.Name()); m != nil && m[1] != "" {
			k, _ := strconv.Atoi(m[1])
			task, _ := strconv.Atoi(m[3])
			ok = k == task && slurm.OwnsLog(p, m[2], ids, "encode: shard "+strconv.Itoa(k)+" of ")
		} else if m := mergeLogRE.FindStringSubmatch(e.Name()); m != nil {
			ok = slurm.OwnsLog(p, m[1], ids, "encode merge: ")
		}
		if !ok {
			foreign = append(foreign, "logs/"+e.Name())
		}
	}
	top, _ := os.ReadDir(dir)
	for _, e := range top {
		if m, _ := filepath.Match("shard-*.safetensors", e.Name()); m && (!shardFileRE.MatchString(e.Name()) || !e.Type().IsRegular()) {
			foreign = append(foreign, e.Name())
		}
	}
	return foreign
}
