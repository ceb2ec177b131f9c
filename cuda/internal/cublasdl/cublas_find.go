package cublasdl

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Where libcublas is looked for, in order (cuBLAS is loaded with dlopen at
// first use, so that jeirt-cuda needs only the driver to start):
//
//  1. JEIRT_CUBLAS, when set: a library file, or a folder holding
//     libcublas.so.13, .12 or .11. It is then the only place looked: a library
//     named explicitly is not replaced by another one behind the user's back.
//  2. libcublas.so.13, .so.12 and .so.11 on the library path (LD_LIBRARY_PATH,
//     the ld.so cache, the system folders), as dlopen finds a bare name.
//  3. nvidia/*/lib/libcublas.so.13, .12, .11 in Python's site-packages, where
//     the nvidia-cublas wheels (PyTorch's, CuPy's) put it: the folders that
//     python3 on PATH reports, then the usual virtual environment, conda and
//     system locations. The libcublasLt beside it is loaded first, since
//     those folders are not on the library path.
//
// Within 2 and 3 the newest major version comes first.

// cublasVersions are the sonames' major versions tried, newest first.
// cuBLAS 11 is the oldest with cublasGemmEx's cublasComputeType_t.
var cublasVersions = []string{"13", "12", "11"}

// Candidate is one library for dlopen to try.
type Candidate struct {
	Path  string // a bare soname (resolved by the loader) or a file path
	Where string // how it was found, for messages
	Lt    string // libcublasLt to load first (RTLD_GLOBAL), "" for none
}

// Search lists the candidates of one library. Every access to the
// machine goes through its fields, so that tests can run it on a fake tree.
type Search struct {
	Base     string   // "libcublas"
	Versions []string // "13", "12", "11"
	Override string   // JEIRT_CUBLAS
	// Sites returns the site-packages folders python3 reports (in its
	// order), or an error when there is no python3 to ask.
	Sites  func() ([]string, error)
	Getenv func(string) string
	Root   string // prefix of the usual locations ("" for /; tests set it)
	Glob   func(pattern string) ([]string, error)
	Stat   func(name string) (fs.FileInfo, error)
}

// DefaultSearch is the search of the running process.
func DefaultSearch() Search {
	return Search{Base: "libcublas", Versions: cublasVersions, Override: os.Getenv("JEIRT_CUBLAS"),
		Sites: func() ([]string, error) { return pythonSitePackages("python3") }, Getenv: os.Getenv,
		Glob: filepath.Glob, Stat: os.Stat}
}

// sitePatterns are the usual places of site-packages folders besides the
// ones python3 reports: virtual environments (such as /opt/torch/.venv),
// conda, pip --user and the system Pythons.
var sitePatterns = []string{
	"$VIRTUAL_ENV/lib/python3*/site-packages",
	"$CONDA_PREFIX/lib/python3*/site-packages",
	"$HOME/.local/lib/python3*/site-packages",
	"/opt/*/.venv/lib/python3*/site-packages",
	"/opt/*/lib/python3*/site-packages",
	"/opt/conda/envs/*/lib/python3*/site-packages",
	"/usr/local/lib/python3*/dist-packages",
	"/usr/local/lib/python3*/site-packages",
	"/usr/lib/python3/dist-packages",
	"/usr/lib/python3*/site-packages",
}

// Candidates returns the libraries to try, in order, and the places looked
// (for the message when none loads).
func (s Search) Candidates() (cands []Candidate, looked []string) {
	names := make([]string, len(s.Versions))
	for i, v := range s.Versions {
		names[i] = s.Base + ".so." + v
	}
	if s.Override != "" {
		looked = append(looked, "JEIRT_CUBLAS="+s.Override)
		fi, err := s.Stat(s.Override)
		if err != nil || !fi.IsDir() {
			// A file, or a name for the loader: dlopen says what is wrong with it.
			return []Candidate{{Path: s.Override, Where: "JEIRT_CUBLAS", Lt: s.ltBeside(s.Override)}}, looked
		}
		for _, n := range names {
			if p := filepath.Join(s.Override, n); s.exists(p) {
				cands = append(cands, Candidate{Path: p, Where: "JEIRT_CUBLAS", Lt: s.ltBeside(p)})
			}
		}
		return cands, looked
	}
	for _, n := range names {
		cands = append(cands, Candidate{Path: n, Where: "the library path"})
	}
	looked = append(looked, "the library path ("+strings.Join(names, ", ")+")")
	sites, how := s.sites()
	looked = append(looked, "nvidia/*/lib under "+how)
	for _, n := range names {
		for _, site := range sites {
			found, _ := s.Glob(filepath.Join(site, "nvidia", "*", "lib", n))
			sort.Strings(found)
			for _, p := range found {
				cands = append(cands, Candidate{Path: p, Where: "site-packages " + site, Lt: s.ltBeside(p)})
			}
		}
	}
	return cands, looked
}

// sites returns the site-packages folders to look in, without repeats, and
// how they were found.
func (s Search) sites() ([]string, string) {
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		p = filepath.Clean(p)
		if !seen[p] && s.exists(p) {
			seen[p] = true
			out = append(out, p)
		}
	}
	var how []string
	if s.Sites != nil {
		py, err := s.Sites()
		for _, p := range py {
			add(p)
		}
		if err != nil {
			how = append(how, "python3's site-packages (not asked: "+err.Error()+")")
		} else {
			how = append(how, fmt.Sprintf("python3's site-packages (%s)", strings.Join(py, ", ")))
		}
	}
	n := len(out)
	for _, pat := range sitePatterns {
		if strings.HasPrefix(pat, "$") {
			v, rest, _ := strings.Cut(pat[1:], "/")
			val := s.Getenv(v)
			if val == "" {
				continue
			}
			pat = filepath.Join(val, rest)
		} else {
			pat = s.Root + pat
		}
		found, _ := s.Glob(pat)
		sort.Strings(found)
		for _, p := range found {
			add(p)
		}
	}
	how = append(how, fmt.Sprintf("the usual locations (%d more found)", len(out)-n))
	return out, strings.Join(how, " and ")
}

// ltBeside returns the libcublasLt of the same version in lib's folder, when
// there is one: libcublas needs it, and a folder off the library path does
// not provide it to the loader.
func (s Search) ltBeside(lib string) string {
	base := filepath.Base(lib)
	if !strings.HasPrefix(base, s.Base+".so") {
		return ""
	}
	lt := filepath.Join(filepath.Dir(lib), s.Base+"Lt"+strings.TrimPrefix(base, s.Base))
	if s.exists(lt) {
		return lt
	}
	return ""
}

func (s Search) exists(p string) bool {
	_, err := s.Stat(p)
	return err == nil
}

// LoadFirst tries each candidate with try until one loads, and returns it.
// When none does, the error names every library that was tried and why it
// failed, and the places looked.
func LoadFirst(cands []Candidate, looked []string, try func(Candidate) error) (Candidate, error) {
	var fails []string
	for _, c := range cands {
		err := try(c)
		if err == nil {
			return c, nil
		}
		fails = append(fails, fmt.Sprintf("%s (%s): %v", c.Path, c.Where, err))
	}
	msg := "no usable libcublas.so." + strings.Join(cublasVersions, ", .so.") + "; looked in " + strings.Join(looked, "; ")
	if len(fails) > 0 {
		msg += "; tried " + strings.Join(fails, "; ")
	}
	return Candidate{}, errors.New(msg + "; set JEIRT_CUBLAS to the library (or its folder)")
}

// pythonSitePackages asks python (found on PATH) for its site-packages
// folders: site.getsitepackages() and the user's, in that order.
func pythonSitePackages(python string) ([]string, error) {
	exe, err := exec.LookPath(python)
	if err != nil {
		return nil, fmt.Errorf("no %s on PATH", python)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, exe, "-c",
		"import site\nfor p in site.getsitepackages() + [site.getusersitepackages()]: print(p)").Output()
	if err != nil {
		return nil, fmt.Errorf("%s: %v", exe, err)
	}
	var sites []string
	for _, l := range strings.Split(string(out), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			sites = append(sites, l)
		}
	}
	return sites, nil
}
