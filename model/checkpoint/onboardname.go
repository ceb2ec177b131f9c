package checkpoint

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// onboardedSuffix is what OnboardedDir adds to a folder's name.
const onboardedSuffix = ".plus-"

var unsafeDirName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// OnboardedDir is the folder a checkpoint in dir with the models names
// added is written to, by default, by jeirt add-model and by jeirt serve's
// onboarding alike: beside dir, DIR.plus-NAME for one model (NAME with every
// run of characters other than letters, digits, '.', '_' and '-' made '_',
// at most 64 bytes) or DIR.plus-N-models, with -2, -3, ... appended until
// the name is free. An earlier onboarding's suffix is dropped from dir's
// name first, so that onboarding b onto out/ck.plus-a gives out/ck.plus-b
// and the name never grows with the number of onboardings.
func OnboardedDir(dir string, names []string) string {
	dir = filepath.Clean(dir)
	parent, base := filepath.Split(dir)
	if k := strings.Index(base, onboardedSuffix); k > 0 {
		base = base[:k]
	}
	var tail string
	if len(names) == 1 {
		tail = strings.Trim(unsafeDirName.ReplaceAllString(names[0], "_"), "_")
		if len(tail) > 64 {
			tail = tail[:64]
		}
	} else {
		tail = fmt.Sprintf("%d-models", len(names))
	}
	first := filepath.Join(parent, base+onboardedSuffix+tail)
	out := first
	for k := 2; ; k++ {
		if _, err := os.Lstat(out); errors.Is(err, os.ErrNotExist) {
			return out
		}
		out = first + "-" + strconv.Itoa(k)
	}
}
