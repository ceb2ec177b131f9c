package main

import (
	"github.com/spf13/cobra"
)

// addEncoderFlag adds --encoder SPEC to a command that opens a checkpoint's
// encoder.
func addEncoderFlag(cmd *cobra.Command, spec *string) {
	cmd.Flags().StringVar(spec, "encoder", "", "encoder to use instead of the one the checkpoint records (e.g. a moved model folder, hf:ORG/NAME); its fingerprint must match")
}
