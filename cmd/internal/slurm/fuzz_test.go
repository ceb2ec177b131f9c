package slurm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzReadRecord feeds slurm.json contents to ReadRecord in a folder that
// holds its two scripts: every input gives a record within its bounds
// (tasks, job ids, task lists, scripts and done paths inside the folder),
// or a short error.
func FuzzReadRecord(f *testing.F) {
	dir := f.TempDir()
	os.WriteFile(filepath.Join(dir, "encode.sbatch"), []byte("#!/bin/bash\n#SBATCH --array=0-2\n"), 0o755)
	os.WriteFile(filepath.Join(dir, "merge.sbatch"), []byte("#!/bin/bash\n"), 0o755)
	out := filepath.Join(dir, "logs", "shard-%4a-%A_%a.out")
	f.Add([]byte(`{"format":"jeirt-slurm","format_version":2,"folder":"` + dir + `","what":"shard","script":"encode.sbatch","tasks":3,"done":"shard-{id}.out","width":4,"check":"file","output":"` + out + `","jobs":[{"id":"100","array":"0-2"}]}`))
	f.Add([]byte(`{"format":"jeirt-slurm","format_version":1,"what":"shard","script":"encode.sbatch","tasks":3000000000,"done":"shard-{id}.out","width":4,"check":"file","output":"` + out + `","jobs":[{"id":"100","array":"0-2000000000"}]}`))
	f.Add([]byte(`{"format":"jeirt-slurm","format_version":1,"what":"shard","script":"../x.sbatch","tasks":3,"done":"../{id}","width":4,"check":"file","output":"/etc/%j"}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		if err := os.WriteFile(filepath.Join(dir, RecordFile), raw, 0o644); err != nil {
			t.Fatal(err)
		}
		a, err := ReadRecord(dir)
		if err != nil {
			if len(err.Error()) > 4096 {
				t.Errorf("error of %d bytes", len(err.Error()))
			}
			return
		}
		if a.Tasks != 3 || strings.ContainsAny(a.Script, "/\\") || !filepath.IsLocal(a.Done) {
			t.Fatalf("record %+v", a)
		}
		for _, j := range a.Jobs {
			if strings.Trim(j.ID, "0123456789") != "" || len(j.Tasks) > a.Tasks {
				t.Fatalf("job %+v", j)
			}
			for _, k := range j.Tasks {
				if k < 0 || k >= a.Tasks || !filepath.IsLocal(strings.ReplaceAll(a.Done, "{id}", a.ID(k))) {
					t.Fatalf("job %+v task %d", j, k)
				}
			}
		}
	})
}
