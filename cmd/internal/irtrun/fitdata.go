package irtrun

import (
	"fmt"
	"path/filepath"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/irtfit"
	"github.com/jeirt/jeirt/model/progress"
	"github.com/jeirt/jeirt/model/read"
)

// readFitDataLogged reads again the responses the fit folder dir was made
// from, as --rule info does (irtfit.ReadFolderData): each data file where it is
// now, and only with the SHA-256 fit.json recorded (irtfit.Settings.Resolve:
// a changed file is an error naming it, irtfit.ErrDataChanged), then
// logged as ReadLogged logs it. An older fit's relative path must read as
// the fit's models and items. folder's settings then name the files where
// they are now.
func readFitDataLogged(dir string, folder *irtfit.Folder, log progress.Logf) (*model.Responses, error) {
	s, err := folder.Doc.Settings.Resolve(dir)
	if err != nil {
		return nil, err
	}
	if s.Joint {
		r, err := irtfit.ReadFolderData(dir, folder)
		if err == nil {
			log.Printf("read %s: %d models x %d items, %d observed cells", s.Data, r.NumModels(), r.NumItems(), r.Len())
		}
		return r, err
	}
	r, err := ReadLogged(s.Data, read.Options{Format: s.Format, Items: s.Items, Duplicates: s.Duplicates, Graded: s.Graded}, log, false)
	if err != nil {
		return nil, err
	}
	if !filepath.IsAbs(s.Data) {
		if why := irtfit.UnlikeFit(r, folder); why != "" {
			return nil, fmt.Errorf("%s: fit.json's settings.data %q is relative to the folder the fit was run from, which this older fit does not record; read from here it is another file (%s): run this from that folder, or refit", dir, s.Data, why)
		}
	}
	folder.Doc.Settings = s
	return r, nil
}
