package main

import (
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/jeirt/jeirt/model/serve"
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
		RunE: func(cmd *cobra.Command, args []string) error {
			if set.Checkpoint == "" {
				return fmt.Errorf("serve: --checkpoint is required")
			}
			if tokenEnv != "" {
				if set.Token = os.Getenv(tokenEnv); set.Token == "" {
					return fmt.Errorf("serve: --token-env %s: the variable is empty or unset", tokenEnv)
				}
			}
			log := cmd.ErrOrStderr()
			set.Log = log
			srv, err := serve.New(set)
			if err != nil {
				return err
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("serve: --addr %s: %w", addr, err)
			}
			if host, _, _ := net.SplitHostPort(addr); !isLoopback(host) && set.Token == "" {
				fmt.Fprintf(log, "serve: warning: listening on %s without a token (--token-env): anyone who can reach it can use it\n", ln.Addr())
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			hup := make(chan os.Signal, 1)
			signal.Notify(hup, syscall.SIGHUP)
			defer signal.Stop(hup)
			go func() {
				for {
					select {
					case <-ctx.Done():
						return
					case <-hup:
						srv.Reload() // logs success or why it failed
					}
				}
			}()
			fmt.Fprintf(log, "serve: %s on http://%s\n", srv.Checkpoint(), ln.Addr())
			err = srv.Serve(ctx, ln, ss)
			fmt.Fprintln(log, "serve: stopped")
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&set.Checkpoint, "checkpoint", "", "checkpoint folder written by jeirt train or add-model")
	f.StringVar(&addr, "addr", "127.0.0.1:8080", "address to listen on")
	f.StringVar(&set.Upstreams, "upstreams", "", "YAML or JSON file: name, base_url, api_key_env, model of each model's OpenAI-compatible server")
	f.StringVar(&set.Costs, "costs", "", "model,cost CSV")
	f.StringVar(&tokenEnv, "token-env", "", "environment variable holding the bearer token required on every route but /healthz")
	f.Int64Var(&set.MaxBody, "max-body", 1<<20, "largest request body in bytes")
	f.IntVar(&set.MaxBatch, "max-batch", 256, "most queries or pairs per request")
	f.DurationVar(&set.UpstreamTimeout, "upstream-timeout", 5*time.Minute, "limit on one forwarded chat request, streaming included")
	f.DurationVar(&ss.ReadTimeout, "read-timeout", 30*time.Second, "limit on reading a request")
	f.DurationVar(&ss.WriteTimeout, "write-timeout", 60*time.Second, "limit on writing an answer (chat streams: --upstream-timeout)")
	f.DurationVar(&ss.IdleTimeout, "idle-timeout", 120*time.Second, "keep-alive connections idle longer are closed")
	f.DurationVar(&ss.Drain, "drain", 30*time.Second, "on SIGINT/SIGTERM, how long to wait for requests in flight")
	return cmd
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func init() { rootCmd.AddCommand(newServeCmd()) }
