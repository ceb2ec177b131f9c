package main

import (
	"github.com/spf13/cobra"

	"github.com/jeirt/jeirt/model"
)

// addEncoderFlag adds --encoder SPEC to a command that opens a checkpoint's
// encoder.
func addEncoderFlag(cmd *cobra.Command, spec *string) {
	cmd.Flags().StringVar(spec, "encoder", "", "encoder to use instead of the one the checkpoint records (e.g. a moved model folder, hf:ORG/NAME); its fingerprint must match")
}

// loadCheckpoint reads a checkpoint and sets its encoder override.
func loadCheckpoint(dir, encoderSpec string) (*model.Checkpoint, error) {
	ck, err := model.LoadCheckpoint(dir)
	if err != nil {
		return nil, err
	}
	ck.Encoder = encoderSpec
	return ck, nil
}
