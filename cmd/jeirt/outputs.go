package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/model/fileio"
)

// Every command goes through guard before it does any work: its reads honour
// the command's context (Ctrl-C stops a read blocked on a pipe or a FIFO),
// the folders it writes are marked as this command's, and each output path
// passes the output rule (model.CheckOutput) against every input the
// command names, so that an existing output is refused without --force, an
// output that is or holds an input is refused, and nothing is computed
// before that is known.

// outputs says which flags and arguments of a command are its outputs.
type outputs struct {
	folders []string // flags naming output folders
	// filesWith are flags that, when given, make the folders files (add-model
	// --fit writes one CSV where add-model --checkpoint writes a checkpoint).
	filesWith []string
	files     []string // flags naming output files
	argsIn    bool     // the positional arguments (but argOut) are inputs
	argOut    int      // the 1-based positional argument that is an output file; 0: none
	resumes   bool     // the command resumes an existing output folder of its own (model.Output.Resumes)
	// sidecars are the other files written beside an output file.
	sidecars func(out string) []string
	// inputs are inputs besides the flags and arguments.
	inputs func(args []string) []string
	// device, when set, is the device the command's settings ask for when
	// --device is not given (see resolveDevice).
	device func(c *cobra.Command) (string, error)
}

// inputFlags are the flags, of any command, that name a file or folder the
// command reads.
var inputFlags = []string{"data", "items", "config", "checkpoint", "fit", "cache", "train", "val", "costs",
	"pool", "answered", "answers", "groups", "responses", "route-csv", "sweep", "encoder", "upstreams"}

// guard makes cmd apply the output rule and the input context before its
// RunE (see above), adding --force when it has outputs and no --force yet.
func guard(cmd *cobra.Command, o outputs) *cobra.Command {
	if len(o.folders)+len(o.files) > 0 || o.argOut > 0 {
		if cmd.Flags().Lookup("force") == nil {
			cmd.Flags().Bool("force", false, "replace the output if it exists (only what jeirt wrote is ever replaced)")
		}
	}
	run := cmd.RunE
	cmd.RunE = func(c *cobra.Command, args []string) error {
		defer fileio.SetInputContext(c.Context())()
		fileio.SetOutputWriter(c.CommandPath(), version)
		if err := checkOutputs(c, args, o); err != nil {
			return err
		}
		if err := resolveDevice(c, o); err != nil {
			return err
		}
		return run(c, args)
	}
	return cmd
}

// checkOutputs is the output rule for the outputs o of c run with args.
func checkOutputs(c *cobra.Command, args []string, o outputs) error {
	type out struct {
		path   string
		folder bool
	}
	var outs []out
	for _, names := range []struct {
		flags  []string
		folder bool
	}{{o.folders, !anyChanged(c, o.filesWith)}, {o.files, false}} {
		for _, name := range names.flags {
			if f := c.Flags().Lookup(name); f != nil && f.Value.String() != "" && f.Value.String() != "-" {
				outs = append(outs, out{f.Value.String(), names.folder})
			}
		}
	}
	if o.argOut > 0 && len(args) >= o.argOut {
		outs = append(outs, out{args[o.argOut-1], false})
	}
	if o.sidecars != nil {
		for _, x := range outs {
			if !x.folder {
				for _, s := range o.sidecars(x.path) {
					outs = append(outs, out{s, false})
				}
			}
		}
	}
	if len(outs) == 0 {
		return nil
	}
	inputs := commandInputs(c, args, o)
	force, _ := c.Flags().GetBool("force")
	for k, x := range outs {
		var others []string // one output may not hold another
		for j, y := range outs {
			if j != k {
				others = append(others, y.path)
			}
		}
		if _, err := fileio.CheckOutput(fileio.Output{Path: x.path, Folder: x.folder, Force: force, Inputs: inputs, Others: others, Resumes: o.resumes && x.folder}); err != nil {
			return err
		}
	}
	return nil
}

// commandInputs lists every file or folder c reads: its input flags, its
// positional inputs and jeirt's cache folder.
func commandInputs(c *cobra.Command, args []string, o outputs) []string {
	var in []string
	visit := func(f *pflag.Flag) {
		if f.Annotations["alias-of"] != nil || !isInputFlag(f.Name) || !strings.HasPrefix(f.Value.Type(), "string") {
			return // synth's --items is a count
		}
		var vals []string
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			vals = sv.GetSlice()
		} else {
			vals = []string{f.Value.String()}
		}
		for _, v := range vals {
			if f.Name == "encoder" {
				// hash:8 and hf:ORG/NAME are not paths; precomputed:FILE and a model folder are.
				v = strings.TrimPrefix(v, "precomputed:")
				if _, err := os.Stat(v); err != nil {
					continue
				}
			}
			if v != "" && v != "-" {
				in = append(in, v)
				in = append(in, recordedInputs(f.Name, v)...)
			}
		}
	}
	c.Flags().VisitAll(visit)
	if o.argsIn {
		for k, a := range args {
			if k+1 != o.argOut && a != "-" {
				in = append(in, a)
			}
		}
	}
	if o.inputs != nil {
		in = append(in, o.inputs(args)...)
	}
	if dir, err := os.UserCacheDir(); err == nil {
		in = append(in, filepath.Join(dir, "jeirt"))
	}
	return in
}

// recordedInputs are the files a fit folder or a checkpoint names as its
// data, which the commands reading them may read again (irt select, report).
func recordedInputs(flag, dir string) []string {
	var doc struct {
		Settings struct {
			Data      string   `json:"data"`
			Items     string   `json:"items"`
			JointData []string `json:"joint_data"`
		} `json:"settings"`
		Config struct {
			Data struct{ Responses, Items, Train, Val, Test string } `json:"data"`
		} `json:"config"`
	}
	file := map[string]string{"fit": "fit.json", "checkpoint": checkpoint.ManifestFile}[flag]
	if file == "" {
		return nil
	}
	b, err := fileio.ReadInputFile(filepath.Join(dir, file), fileio.MaxDocumentBytes, file)
	if err != nil || json.Unmarshal(b, &doc) != nil {
		return nil // the command's own read reports what is wrong
	}
	s, d := doc.Settings, doc.Config.Data
	return append([]string{s.Data, s.Items, d.Responses, d.Items, d.Train, d.Val, d.Test}, s.JointData...)
}

func isInputFlag(name string) bool {
	for _, n := range inputFlags {
		if n == name {
			return true
		}
	}
	return false
}

// anyChanged reports whether any of the flags names was given.
func anyChanged(c *cobra.Command, names []string) bool {
	for _, n := range names {
		if c.Flags().Changed(n) {
			return true
		}
	}
	return false
}
