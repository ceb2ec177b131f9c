package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAptNonfreeScript runs scripts/test-apt-nonfree.sh, which checks how
// scripts/apt-nonfree.sh (used by scripts/build-cuda.sh) derives the sources
// that enable Debian's non-free components from sample apt configurations:
// deb822 and one-line files, components already present, third-party
// repositories and no sources at all. It needs bash, not root or a network.
func TestAptNonfreeScript(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	if _, err := exec.LookPath("awk"); err != nil {
		t.Skip("no awk")
	}
	root := sweepRepoRoot(t)
	out, err := runBash(t, t.TempDir(), nil, filepath.Join(root, "scripts", "test-apt-nonfree.sh"))
	if err != nil {
		t.Fatalf("scripts/test-apt-nonfree.sh: %v\n%s", err, out)
	}
	if !strings.Contains(out, "PASS test-apt-nonfree") {
		t.Fatalf("scripts/test-apt-nonfree.sh did not pass:\n%s", out)
	}
	t.Logf("%s", out)
}
