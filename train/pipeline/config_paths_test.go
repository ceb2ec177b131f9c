package pipeline

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A config's relative path that does not exist names the folder it was
// resolved against; a --set of the key is the working directory's and is
// not reported so; a tab in the YAML names its line.
func TestConfigPathsAndTabs(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "cfg"), 0o755)
	os.WriteFile(filepath.Join(dir, "r.csv"), []byte("model,item,correct\nm,q,1\n"), 0o644)
	write := func(name, text string) string {
		p := filepath.Join(dir, "cfg", name)
		os.WriteFile(p, []byte(text), 0o644)
		return p
	}
	run := func(p string, overrides ...string) error {
		c, err := LoadConfigSet(p, overrides)
		if err != nil {
			return err
		}
		return c.CheckInputs()
	}
	missing := write("missing.yaml", "data: {responses: r.csv}\nencoder: {spec: \"hash:8\"}\noutput: ck\n")
	err := run(missing)
	want := "data.responses: " + filepath.Join(dir, "cfg", "r.csv") + " does not exist (a path written in the config is resolved against the config's folder " + filepath.Join(dir, "cfg") + ", not the working directory: there it reads r.csv)"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("missing data: %v, want %q", err, want)
	}
	if err := run(missing, "data.responses="+filepath.Join(dir, "r.csv")); err != nil {
		t.Errorf("the path given with --set: %v", err)
	}
	items := write("items.yaml", "data: {responses: ../r.csv, items: ../texts.csv}\nencoder: {spec: \"hash:8\"}\noutput: ck\n")
	if err := run(items); err == nil || !strings.Contains(err.Error(), "data.items: "+filepath.Join(dir, "texts.csv")+" does not exist (a path written in the config is resolved against the config's folder "+filepath.Join(dir, "cfg")+", not the working directory: there it reads ../texts.csv)") {
		t.Errorf("missing items: %v", err)
	}
	ok := write("ok.yaml", "data: {responses: ../r.csv}\nencoder: {spec: \"hash:8\"}\noutput: ../out/ck\n")
	if err := run(ok); err != nil {
		t.Errorf("a config whose output does not exist yet: %v", err)
	}
	tab := write("tab.yaml", "data:\n\tresponses: ../r.csv\n")
	if _, err := LoadConfig(tab); err == nil || err.Error() != tab+":2: tabs are not allowed in YAML: indent line 2 with spaces" {
		t.Errorf("a tab: %v", err)
	}
}
