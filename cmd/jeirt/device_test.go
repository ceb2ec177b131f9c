package main

import (
	"testing"

	"github.com/spf13/cobra"

	"github.com/jeirt/jeirt/train/backend"
)

// Every command that computes takes --device and resolves it by the one
// device rule before reading anything: on a build without CUDA, cuda is a
// one-line error that says why, and an unknown device is named.
func TestDeviceFlag(t *testing.T) {
	if _, err := backend.Resolve("cuda"); err == nil {
		t.Skip("this build has CUDA")
	}
	cases := []struct {
		cmd  func() *cobra.Command
		args []string
	}{
		{newTrainCmd, []string{"--config", "../../configs/quickstart.yaml"}},
		{newIRTCmd, []string{"fit", "--data", "x.csv", "--out", "y"}},
		{newIRTCmd, []string{"cv", "--data", "x.csv"}},
		{newEncodeCmd, []string{"--items", "x.csv", "--out", "y.npy"}},
		{newAddModelCmd, []string{"--checkpoint", "ck", "--data", "x.csv"}},
		{newAddModelCmd, []string{"suggest", "3", "--checkpoint", "ck"}},
		{newRouteCmd, []string{"q.txt", "--checkpoint", "ck"}},
		{newRouteCmd, []string{"eval", "--checkpoint", "ck", "--data", "x.csv"}},
		{newEvalCmd, []string{"--checkpoint", "ck", "--data", "x.csv"}},
	}
	for _, c := range cases {
		for dev, want := range map[string]string{
			"cuda": "device cuda: this jeirt binary was built without CUDA; build the CUDA runner with scripts/build-cuda.sh (it writes bin/jeirt-cuda, and a bin/jeirt that runs --device cuda commands in it)",
			"tpu":  `device "tpu": unknown (want auto, cpu or cuda)`,
		} {
			_, err := runCmd(t, c.cmd(), append(c.args, "--device", dev)...)
			if err == nil || err.Error() != want {
				t.Errorf("%v --device %s: %v, want %q", c.args, dev, err, want)
			}
		}
	}
}
