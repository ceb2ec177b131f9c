package encoder

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/jeirt/jeirt/model/fileio"
)

// HFCacheDirs returns the Hugging Face hub cache folders to search, in
// order: $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub
// (huggingface_hub's own rule; $XDG_CACHE_HOME replaces ~/.cache when set).
func HFCacheDirs() []string {
	if d := os.Getenv("HF_HUB_CACHE"); d != "" {
		return []string{d}
	}
	if d := os.Getenv("HF_HOME"); d != "" {
		return []string{filepath.Join(d, "hub")}
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return []string{filepath.Join(d, "huggingface", "hub")}
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return nil
	}
	return []string{filepath.Join(home, ".cache", "huggingface", "hub")}
}

// ResolveHF finds the folder of a model in the local Hugging Face cache,
// without any network. ref is ORG/NAME or ORG/NAME@REV (the spec hf:ORG/NAME
// without "hf:"); REV is a branch or tag with a file in refs/ (default main)
// or a commit hash naming a snapshot. The folder is
// CACHE/models--ORG--NAME/snapshots/<commit>/. When nothing is found the
// error lists every place looked at.
func ResolveHF(ref string) (string, error) {
	name, rev, _ := strings.Cut(ref, "@")
	if name == "" || strings.Count(name, "/") > 1 || strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/") || strings.Contains(name, "..") {
		return "", fmt.Errorf("encoder hf:%s: want hf:ORG/NAME or hf:ORG/NAME@REVISION", ref)
	}
	if rev == "" {
		rev = "main"
	}
	if strings.ContainsAny(rev, `/\`) || rev == ".." || rev == "." {
		return "", fmt.Errorf("encoder hf:%s: revision %q is not a branch, tag or commit", ref, rev)
	}
	repo := "models--" + strings.ReplaceAll(name, "/", "--")
	var looked []string
	caches := HFCacheDirs()
	for _, cache := range caches {
		base := filepath.Join(cache, repo)
		refFile := filepath.Join(base, "refs", rev)
		if b, err := fileio.ReadInputFile(refFile, 4096, "a Hugging Face ref"); err == nil {
			commit := strings.TrimSpace(string(b))
			dir := filepath.Join(base, "snapshots", commit)
			if commit != "" && !strings.ContainsAny(commit, `/\`) && isDir(dir) {
				return dir, nil
			}
			looked = append(looked, fmt.Sprintf("%s (names %q, but %s is missing)", refFile, commit, dir))
		} else {
			looked = append(looked, refFile+" (missing)")
		}
		dir := filepath.Join(base, "snapshots", rev)
		if isDir(dir) {
			return dir, nil
		}
		looked = append(looked, dir+" (missing)")
	}
	if len(caches) == 0 {
		looked = append(looked, "no cache folder: HF_HUB_CACHE, HF_HOME and the home folder are all unset")
	}
	return "", fmt.Errorf("encoder hf:%s is not in the local Hugging Face cache (jeirt never downloads; fetch it with `huggingface-cli download %s` or set HF_HUB_CACHE / HF_HOME); looked at:\n  %s",
		ref, name, strings.Join(looked, "\n  "))
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
