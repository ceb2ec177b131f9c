package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/jeirt/jeirt/cmd/internal/runner"
	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/train/backend"
)

// Every command goes through Guard before it does any work: its reads honour
// the command's context (Ctrl-C stops a read blocked on a pipe or a FIFO),
// the folders it writes are marked as this command's, and each output path
// passes the output rule (model.CheckOutput) against every input the
// command names, so that an existing output is refused without --force, an
// output that is or holds an input is refused, and nothing is computed
// before that is known.

// Outputs says which flags and arguments of a command are its outputs.
type Outputs struct {
	Folders []string // flags naming output folders
	// FilesWith are flags that, when given, make the folders files (add-model
	// --fit writes one CSV where add-model --checkpoint writes a checkpoint).
	FilesWith []string
	// FoldersWith are flags that, when given, make the files folders
	// (encode --emit slurm writes a job folder where encode writes a file).
	FoldersWith []string
	Files       []string // flags naming output files
	ArgsIn      bool     // the positional arguments (but ArgOut) are inputs
	ArgOut      int      // the 1-based positional argument that is an output file; 0: none
	Resumes     bool     // the command resumes an existing output folder of its own (model.Output.Resumes)
	// Sidecars are the other files written beside an output file.
	Sidecars func(out string) []string
	// Inputs are inputs besides the flags and arguments.
	Inputs func(args []string) []string
	// Device, when set, is the device the command's settings ask for when
	// --device is not given (see resolveDevice).
	Device func(c *cobra.Command) (string, error)
	// Flags names the flag of each settings field whose flag is not
	// "--" + model.FieldName(field) (see showFlags).
	Flags map[string]string
}

// inputFlags are the flags, of any command, that name a file or folder the
// command reads.
var inputFlags = []string{"data", "items", "config", "checkpoint", "fit", "cache", "train", "val", "costs",
	"pool", "answered", "answers", "groups", "responses", "route-csv", "sweep", "encoder", "upstreams", "foreign", "model-names"}

// GuardedAnnotation marks a command Guard wrapped (a test walks the tree
// for commands without it).
const GuardedAnnotation = "jeirt-guarded"

// Guard makes cmd apply the output rule and the input context before its
// RunE (see above), adding --force when it has outputs and no --force yet.
func Guard(cmd *cobra.Command, o Outputs) *cobra.Command {
	if len(o.Folders)+len(o.Files) > 0 || o.ArgOut > 0 {
		if cmd.Flags().Lookup("force") == nil {
			cmd.Flags().Bool("force", false, "replace the output if it exists (only what jeirt wrote is ever replaced)")
		}
	}
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[GuardedAnnotation] = "yes"
	run := cmd.RunE
	cmd.RunE = func(c *cobra.Command, args []string) error {
		defer fileio.SetInputContext(c.Context())()
		fileio.SetOutputWriter(c.CommandPath(), Version)
		if err := checkMaxMemory(c); err != nil {
			return err
		}
		if err := checkOutputs(c, args, o); err != nil {
			return showFlags(err, o)
		}
		if err := resolveDevice(c, o); err != nil {
			return showFlags(err, o)
		}
		return showFlags(run(c, args), o)
	}
	return cmd
}

// checkMaxMemory refuses a negative --max-memory before any work (0 is
// the command's default).
func checkMaxMemory(c *cobra.Command) error {
	f := c.Flags().Lookup("max-memory")
	if f == nil || !f.Changed {
		return nil
	}
	if v, err := strconv.ParseInt(f.Value.String(), 10, 64); err == nil && v < 0 {
		return fmt.Errorf("--max-memory %d: give the memory in bytes, at least 1 (or 0: the default)", v)
	}
	return nil
}

// checkOutputs is the output rule for the outputs o of c run with args.
func checkOutputs(c *cobra.Command, args []string, o Outputs) error {
	type out struct {
		path   string
		folder bool
	}
	var outs []out
	for _, names := range []struct {
		flags  []string
		folder bool
	}{{o.Folders, !anyChanged(c, o.FilesWith)}, {o.Files, anyChanged(c, o.FoldersWith)}} {
		for _, name := range names.flags {
			if f := c.Flags().Lookup(name); f != nil && f.Value.String() != "" && f.Value.String() != "-" {
				outs = append(outs, out{f.Value.String(), names.folder})
			}
		}
	}
	if o.ArgOut > 0 && len(args) >= o.ArgOut {
		outs = append(outs, out{args[o.ArgOut-1], false})
	}
	if o.Sidecars != nil {
		for _, x := range outs {
			if !x.folder {
				for _, s := range o.Sidecars(x.path) {
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
		if _, err := fileio.CheckOutput(fileio.Output{Path: x.path, Folder: x.folder, Force: force, Inputs: inputs, Others: others, Resumes: o.Resumes && x.folder}); err != nil {
			return err
		}
	}
	return nil
}

// commandInputs lists every file or folder c reads: its input flags, its
// positional inputs and jeirt's cache folder.
func commandInputs(c *cobra.Command, args []string, o Outputs) []string {
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
	if o.ArgsIn {
		for k, a := range args {
			if k+1 != o.ArgOut && a != "-" {
				in = append(in, a)
			}
		}
	}
	if o.Inputs != nil {
		in = append(in, o.Inputs(args)...)
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
			// The same files from the fit folder (a moved or copied project).
			DataFromFit  string   `json:"data_from_fit"`
			ItemsFromFit string   `json:"items_from_fit"`
			JointFromFit []string `json:"joint_data_from_fit"`
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
	in := append([]string{s.Data, s.Items, d.Responses, d.Items, d.Train, d.Val, d.Test}, s.JointData...)
	for _, p := range append([]string{s.DataFromFit, s.ItemsFromFit}, s.JointFromFit...) {
		if p != "" {
			in = append(in, filepath.Join(dir, p))
		}
	}
	return in
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

type deviceKey struct{}

// resolveDevice is the one device resolution of a run of c (Guard calls
// it): the --device flag when given, else what the command's settings ask
// for (o.Device: train's config, irt select's fit), else the flag's default.
// In a binary without CUDA a cuda or auto request first goes to the
// jeirt-cuda runner, which runs the whole command on its GPU when it has one
// (package runner); this is the only place that decides. The resolved device
// (backend.Resolve) is in the command's context for runDevice.
func resolveDevice(c *cobra.Command, o Outputs) error {
	f := c.Flags().Lookup("device")
	if f == nil && o.Device == nil {
		return nil
	}
	var req string
	switch {
	case f != nil && f.Changed:
		req = f.Value.String()
	case o.Device != nil:
		var err error
		if req, err = o.Device(c); err != nil {
			return err
		}
	default:
		req = f.Value.String()
	}
	if req == "" {
		req = backend.Auto
	}
	if !CUDABuilt && (req == backend.CUDA || req == backend.Auto) {
		handled, code, err := runner.Delegate(c.Context(), req, os.Args[1:])
		if handled {
			os.Exit(code)
		}
		if err != nil {
			return fmt.Errorf("device cuda: this jeirt binary was built without CUDA, and %w", err)
		}
	}
	dev, err := backend.Resolve(req)
	if err != nil {
		return err
	}
	c.SetContext(context.WithValue(c.Context(), deviceKey{}, dev))
	return nil
}

// RunDevice is the device Guard resolved for this run of cmd ("" for a
// command that computes nothing).
func RunDevice(cmd *cobra.Command) string {
	d, _ := cmd.Context().Value(deviceKey{}).(string)
	return d
}

// Version is the jeirt release, written into the outputs' markers.
var Version string

// CUDABuilt says whether this binary has the GPU backend compiled in; a
// binary without it hands cuda and auto runs to the jeirt-cuda runner.
var CUDABuilt bool

// showFlags shows the library's field errors in err (model.FieldErrors,
// which name settings as their structs do; every one in err's tree) with the
// command's flag names: "--" + model.FieldName(field), or o.Flags[field].
func showFlags(err error, o Outputs) error {
	if err == nil {
		return nil
	}
	flag := func(f string) string {
		if n, ok := o.Flags[f]; ok {
			return n
		}
		return "--" + model.FieldName(f)
	}
	msg := err.Error()
	shown := msg
	for _, fe := range fieldErrors(err, nil) {
		if lib := fe.Error(); strings.Contains(shown, lib) {
			shown = strings.Replace(shown, lib, fe.Render(flag), 1)
		}
	}
	if shown == msg {
		return err
	}
	return &shownError{msg: shown, err: err}
}

// fieldErrors appends the model.FieldErrors of err's tree to fes, outermost
// first.
func fieldErrors(err error, fes []*model.FieldError) []*model.FieldError {
	if fe, ok := err.(*model.FieldError); ok {
		fes = append(fes, fe)
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		if e := u.Unwrap(); e != nil {
			fes = fieldErrors(e, fes)
		}
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			fes = fieldErrors(e, fes)
		}
	}
	return fes
}

// shownError is an error with its text rewritten for the command line.
type shownError struct {
	msg string
	err error
}

func (e *shownError) Error() string { return e.msg }
func (e *shownError) Unwrap() error { return e.err }
