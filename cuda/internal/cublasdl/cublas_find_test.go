package cublasdl

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// fakeTree writes empty files (paths relative to root) and returns root.
func fakeTree(t *testing.T, files ...string) string {
	t.Helper()
	root := t.TempDir()
	for _, f := range files {
		p := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// fakeSearch is the search over root, with python3 reporting sites (relative
// to root) and the environment env.
func fakeSearch(root string, sites []string, env map[string]string) Search {
	return Search{Base: "libcublas", Versions: cublasVersions, Override: env["JEIRT_CUBLAS"],
		Sites: func() ([]string, error) {
			if sites == nil {
				return nil, errors.New("no python3 on PATH")
			}
			abs := make([]string, len(sites))
			for i, s := range sites {
				abs[i] = filepath.Join(root, s)
			}
			return abs, nil
		},
		Getenv: func(k string) string { return env[k] }, Root: root, Glob: filepath.Glob, Stat: os.Stat}
}

func paths(cs []Candidate) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Path
	}
	return out
}

// The GPU machine's layout: PyTorch's virtual environment in /opt/torch/.venv
// with the nvidia-cublas wheel (CUDA 13), nothing on the library path.
const venvSite = "opt/torch/.venv/lib/python3.12/site-packages"

func TestCuBLASSearchFindsSitePackagesSo13(t *testing.T) {
	root := fakeTree(t, venvSite+"/nvidia/cublas/lib/libcublas.so.13", venvSite+"/nvidia/cublas/lib/libcublasLt.so.13",
		venvSite+"/nvidia/cuda_runtime/lib/libcudart.so.13")
	for _, c := range []struct {
		name  string
		sites []string
	}{{"python3 asked", []string{venvSite}}, {"no python3: the usual locations", nil}} {
		t.Run(c.name, func(t *testing.T) {
			cands, looked := fakeSearch(root, c.sites, nil).Candidates()
			lib := filepath.Join(root, venvSite, "nvidia/cublas/lib/libcublas.so.13")
			want := []string{"libcublas.so.13", "libcublas.so.12", "libcublas.so.11", lib}
			if got := paths(cands); !reflect.DeepEqual(got, want) {
				t.Fatalf("candidates %q, want %q (looked: %q)", got, want, looked)
			}
			last := cands[3]
			if last.Lt != filepath.Join(root, venvSite, "nvidia/cublas/lib/libcublasLt.so.13") {
				t.Errorf("libcublasLt to load first: %q", last.Lt)
			}
			if !strings.HasPrefix(last.Where, "site-packages ") || cands[0].Where != "the library path" || cands[0].Lt != "" {
				t.Errorf("where: %q, %q (Lt %q)", last.Where, cands[0].Where, cands[0].Lt)
			}
		})
	}
}

// TestCuBLASSearchOrder: the library path before site-packages, newest
// version first within each, python3's folders before the usual locations,
// each folder once.
func TestCuBLASSearchOrder(t *testing.T) {
	userSite := "home/u/.local/lib/python3.11/site-packages"
	sysSite := "usr/local/lib/python3.10/dist-packages"
	root := fakeTree(t,
		venvSite+"/nvidia/cublas/lib/libcublas.so.12",
		venvSite+"/nvidia/cublas/lib/libcublas.so.13",
		venvSite+"/nvidia/cu13/lib/libcublas.so.13", // a second wheel's copy
		userSite+"/nvidia/cublas/lib/libcublas.so.11",
		sysSite+"/nvidia/cublas/lib/libcublas.so.13",
		sysSite+"/nvidia/cublas/lib/libcublas.so", // unversioned: never tried
	)
	env := map[string]string{"HOME": filepath.Join(root, "home/u")}
	cands, _ := fakeSearch(root, []string{sysSite, venvSite}, env).Candidates()
	j := func(site, lib string) string { return filepath.Join(root, site, lib) }
	want := []string{
		"libcublas.so.13", "libcublas.so.12", "libcublas.so.11",
		j(sysSite, "nvidia/cublas/lib/libcublas.so.13"),
		j(venvSite, "nvidia/cu13/lib/libcublas.so.13"),
		j(venvSite, "nvidia/cublas/lib/libcublas.so.13"),
		j(venvSite, "nvidia/cublas/lib/libcublas.so.12"),
		j(userSite, "nvidia/cublas/lib/libcublas.so.11"),
	}
	if got := paths(cands); !reflect.DeepEqual(got, want) {
		t.Fatalf("candidates\n%q\nwant\n%q", got, want)
	}
	// LoadFirst stops at the first that loads, after the ones that fail.
	var tried []string
	got, err := LoadFirst(cands, nil, func(c Candidate) error {
		tried = append(tried, c.Path)
		if c.Path == want[5] {
			return nil
		}
		return errors.New("cannot open")
	})
	if err != nil || got.Path != want[5] || !reflect.DeepEqual(tried, want[:6]) {
		t.Errorf("LoadFirst: %q, %v after %q", got.Path, err, tried)
	}
}

// TestCuBLASSearchOverride: JEIRT_CUBLAS, a file or a folder, is the only
// place looked.
func TestCuBLASSearchOverride(t *testing.T) {
	root := fakeTree(t, venvSite+"/nvidia/cublas/lib/libcublas.so.13", "cuda-12/lib64/libcublas.so.12",
		"cuda-12/lib64/libcublasLt.so.12", "cuda-12/lib64/libcublas.so.11")
	dir := filepath.Join(root, "cuda-12/lib64")
	for _, c := range []struct {
		override string
		want     []string
	}{
		{dir, []string{filepath.Join(dir, "libcublas.so.12"), filepath.Join(dir, "libcublas.so.11")}},
		{filepath.Join(dir, "libcublas.so.11"), []string{filepath.Join(dir, "libcublas.so.11")}},
		{"libcublas.so.12", []string{"libcublas.so.12"}},
		{filepath.Join(root, "missing/libcublas.so.13"), []string{filepath.Join(root, "missing/libcublas.so.13")}},
	} {
		cands, looked := fakeSearch(root, []string{venvSite}, map[string]string{"JEIRT_CUBLAS": c.override}).Candidates()
		if got := paths(cands); !reflect.DeepEqual(got, c.want) {
			t.Errorf("JEIRT_CUBLAS=%s: candidates %q, want %q", c.override, got, c.want)
		}
		if len(looked) != 1 || looked[0] != "JEIRT_CUBLAS="+c.override {
			t.Errorf("JEIRT_CUBLAS=%s: looked %q", c.override, looked)
		}
	}
	cands, _ := fakeSearch(root, nil, map[string]string{"JEIRT_CUBLAS": dir}).Candidates()
	if cands[0].Lt != filepath.Join(dir, "libcublasLt.so.12") || cands[1].Lt != "" {
		t.Errorf("libcublasLt beside the override: %q, %q", cands[0].Lt, cands[1].Lt)
	}
}

// TestCuBLASMissingNamed: with no libcublas anywhere, the error names the
// libraries and places looked, each failure, and the way out.
func TestCuBLASMissingNamed(t *testing.T) {
	root := fakeTree(t, venvSite+"/nvidia/cuda_runtime/lib/libcudart.so.13")
	cands, looked := fakeSearch(root, []string{venvSite}, nil).Candidates()
	if got := paths(cands); !reflect.DeepEqual(got, []string{"libcublas.so.13", "libcublas.so.12", "libcublas.so.11"}) {
		t.Fatalf("candidates %q", got)
	}
	_, err := LoadFirst(cands, looked, func(c Candidate) error {
		return errors.New(c.Path + ": cannot open shared object file: No such file or directory")
	})
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		"no usable libcublas.so.13, .so.12, .so.11",
		"the library path (libcublas.so.13, libcublas.so.12, libcublas.so.11)",
		"nvidia/*/lib under python3's site-packages (" + filepath.Join(root, venvSite) + ")",
		"tried libcublas.so.13 (the library path): libcublas.so.13: cannot open shared object file",
		"libcublas.so.11 (the library path)",
		"set JEIRT_CUBLAS",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	// No python3: said so, and the usual locations are still searched.
	_, looked = fakeSearch(root, nil, nil).Candidates()
	if s := strings.Join(looked, "; "); !strings.Contains(s, "python3's site-packages (not asked: no python3 on PATH) and the usual locations (1 more found)") {
		t.Errorf("looked: %s", s)
	}
}

// TestPythonSitePackages asks a stand-in python3 (a shell script) for its
// folders, as the search does on the GPU machine.
func TestPythonSitePackages(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("shell script")
	}
	bin := t.TempDir()
	script := "#!/bin/sh\n[ \"$1\" = -c ] || exit 2\necho /opt/torch/.venv/lib/python3.12/site-packages\necho\necho /root/.local/lib/python3.12/site-packages\n"
	if err := os.WriteFile(filepath.Join(bin, "python3"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	got, err := pythonSitePackages("python3")
	want := []string{"/opt/torch/.venv/lib/python3.12/site-packages", "/root/.local/lib/python3.12/site-packages"}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, %v; want %q", got, err, want)
	}
	if _, err := pythonSitePackages("python3-missing"); err == nil || err.Error() != "no python3-missing on PATH" {
		t.Errorf("missing interpreter: %v", err)
	}
}
