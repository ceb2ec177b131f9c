package main

import (
	"fmt"
	"os"
	"time"

	"github.com/jeirt/jeirt/cmd/internal/cli"
	"github.com/jeirt/jeirt/cmd/internal/serve"
	"github.com/spf13/cobra"
)

func newServeCmd() *cobra.Command {
	var set serve.Settings
	var ss serve.ServeSettings
	var addr, tokenEnv string
	cmd := &cobra.Command{
		Use:     "serve --checkpoint DIR [--addr 127.0.0.1:8080] [--upstreams FILE] [--costs FILE] [--token-env NAME]",
		Short:   "Serve the router over HTTP, in front of the models' OpenAI-compatible endpoints",
		Long:    helpText("serve"),
		Example: helpExamples("serve"),
		Args:    cobra.NoArgs,
		// Ctrl-C is how serve ends: it exits 0.
		Annotations: map[string]string{cli.StopsOnSignal: "yes"},
		RunE: func(cmd *cobra.Command, args []string) error {
			if set.Checkpoint == "" {
				return fmt.Errorf("serve: --checkpoint is required")
			}
			if tokenEnv != "" {
				if set.Token = os.Getenv(tokenEnv); set.Token == "" {
					return fmt.Errorf("serve: --token-env %s: the variable is empty or unset", tokenEnv)
				}
			}
			set.Log = stderrLog(cmd)
			return serve.ListenAndServe(cmd.Context(), set, ss, addr)
		},
	}
	f := cmd.Flags()
	f.StringVar(&set.Checkpoint, "checkpoint", "", "checkpoint folder written by jeirt train or add-model")
	f.StringVar(&addr, "addr", "127.0.0.1:8080", "address to listen on")
	f.StringVar(&set.Upstreams, "upstreams", "", "YAML or JSON file: name, base_url, api_key_env, model of each model's OpenAI-compatible server")
	f.StringVar(&set.Costs, "costs", "", "model,cost CSV")
	f.StringVar(&tokenEnv, "token-env", "", "environment variable holding the bearer token required on every route but /healthz")
	f.Int64Var(&set.MaxBody, "max-body", 1<<20, "largest request body in bytes, but chat's")
	f.Int64Var(&set.MaxChatBody, "max-chat-body", 16<<20, "largest chat request body in bytes (long agent contexts)")
	f.IntVar(&set.MaxBatch, "max-batch", 256, "most queries or pairs per request")
	f.DurationVar(&set.UpstreamTimeout, "upstream-timeout", 5*time.Minute, "limit on one forwarded chat request, streaming included")
	f.DurationVar(&ss.ReadTimeout, "read-timeout", 30*time.Second, "limit on reading a request")
	f.DurationVar(&ss.WriteTimeout, "write-timeout", 60*time.Second, "limit on writing an answer (chat streams: --upstream-timeout)")
	f.DurationVar(&ss.IdleTimeout, "idle-timeout", 120*time.Second, "keep-alive connections idle longer are closed")
	f.DurationVar(&set.ReloadTimeout, "reload-timeout", time.Minute, "limit on one reload of the checkpoint (SIGHUP, POST /admin/reload); past it the previous one keeps serving")
	f.DurationVar(&ss.Drain, "drain", 30*time.Second, "on SIGINT/SIGTERM, how long to wait for requests in flight")
	return cli.Guard(cmd, cli.Outputs{})
}

func init() { rootCmd.AddCommand(newServeCmd()) }
