package main

import "github.com/jeirt/jeirt/cmd/internal/cli"

// The flag conventions (deprecated spellings, suggestions, argument checks)
// live in cmd/internal/cli; these are their short names here.
var (
	alias    = cli.Alias
	needArgs = cli.NeedArgs
	groupRun = cli.GroupRun
)

func init() { rootCmd.SetFlagErrorFunc(cli.FlagError) }
