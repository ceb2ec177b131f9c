//go:build cgo

package cublasdl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// realCuBLAS loads the machine's libcublas through the search and returns
// the file it loaded, or skips when the machine has none (CI installs
// Debian's CUDA 11.8 libraries with the headers, scripts/build-cuda.sh).
func realCuBLAS(t *testing.T) string {
	t.Helper()
	skipInUse(t)
	cands, looked := DefaultSearch().Candidates()
	if _, err := LoadFirst(cands, looked, Open); err != nil {
		t.Skipf("no libcublas on this machine: %v", err)
	}
	defer Close()
	p, err := filepath.EvalSymlinks(Where())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCuBLASDlopenSitePackages loads a real libcublas (and its libcublasLt)
// from a fake site-packages tree, as on the GPU machine where the library
// comes from the nvidia-cublas wheel, and through JEIRT_CUBLAS; without a
// GPU it stops short of making a handle.
func TestCuBLASDlopenSitePackages(t *testing.T) {
	real := realCuBLAS(t)
	base := filepath.Base(real) // libcublas.so.11.11.3.6
	i := strings.Index(base, ".so.")
	major := strings.SplitN(base[i+4:], ".", 2)[0]
	root := t.TempDir()
	lib := filepath.Join(root, venvSite, "nvidia", "cublas", "lib")
	if err := os.MkdirAll(lib, 0o755); err != nil {
		t.Fatal(err)
	}
	soname := "libcublas.so." + major
	if err := os.Symlink(real, filepath.Join(lib, soname)); err != nil {
		t.Fatal(err)
	}
	if lt, err := filepath.EvalSymlinks(filepath.Join(filepath.Dir(real), "libcublasLt.so."+major)); err == nil {
		if err := os.Symlink(lt, filepath.Join(lib, "libcublasLt.so."+major)); err != nil {
			t.Fatal(err)
		}
	}
	want := filepath.Join(lib, soname)

	cands, _ := fakeSearch(root, []string{venvSite}, nil).Candidates()
	var site []Candidate
	for _, c := range cands {
		if strings.HasPrefix(c.Where, "site-packages") {
			site = append(site, c)
		}
	}
	if len(site) != 1 || site[0].Path != want {
		t.Fatalf("site-packages candidates %+v, want %s", site, want)
	}
	for _, c := range []Candidate{site[0], fakeSearchOverride(t, root, lib)} {
		if err := Open(c); err != nil {
			t.Fatalf("%s: %v", c.Path, err)
		}
		if got := Where(); got != want {
			t.Errorf("%s (%s): the loader opened %q, want %q", c.Path, c.Where, got, want)
		}
		Close()
	}
}

// skipInUse skips where the GPU's products have loaded libcublas (in the
// jeirtcuda test binary these tests run first, by file order).
func skipInUse(t *testing.T) {
	if inUse {
		t.Skip("libcublas is loaded for the GPU's products already")
	}
}

func fakeSearchOverride(t *testing.T, root, dir string) Candidate {
	cands, _ := fakeSearch(root, nil, map[string]string{"JEIRT_CUBLAS": dir}).Candidates()
	if len(cands) != 1 || cands[0].Where != "JEIRT_CUBLAS" {
		t.Fatalf("JEIRT_CUBLAS=%s: %+v", dir, cands)
	}
	return cands[0]
}

// TestCuBLASDlopenFailures: what dlopen and dlsym say reaches the error,
// with the library's name.
func TestCuBLASDlopenFailures(t *testing.T) {
	skipInUse(t)
	root := fakeTree(t)
	junk := filepath.Join(root, "libcublas.so.13")
	if err := os.WriteFile(junk, []byte("not a library"), 0o644); err != nil {
		t.Fatal(err)
	}
	libc := "libc.so.6" // loads, but has no cuBLAS functions
	for _, c := range []struct{ override, want string }{
		{filepath.Join(root, "missing", "libcublas.so.13"), "missing/libcublas.so.13 (JEIRT_CUBLAS): " + filepath.Join(root, "missing", "libcublas.so.13") + ": cannot open shared object file"},
		{junk, "libcublas.so.13 (JEIRT_CUBLAS): " + junk + ": "},
		{libc, "libc.so.6 (JEIRT_CUBLAS): lacks cublasCreate_v2"},
	} {
		cands, looked := fakeSearch(root, nil, map[string]string{"JEIRT_CUBLAS": c.override}).Candidates()
		_, err := LoadFirst(cands, looked, Open)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "looked in JEIRT_CUBLAS="+c.override) {
			t.Errorf("JEIRT_CUBLAS=%s: %v\nwant it to contain %q", c.override, err, c.want)
		}
		if got := Where(); got != "" {
			t.Errorf("JEIRT_CUBLAS=%s: left %s loaded", c.override, got)
		}
	}
}
