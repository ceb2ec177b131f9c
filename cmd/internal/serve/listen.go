package serve

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/jeirt/jeirt/model"
)

// ListenAndServe is jeirt serve: it opens the server of set, listens on
// addr and serves until ctx is done or SIGINT/SIGTERM arrives, reloading the
// checkpoint and costs on SIGHUP. It warns on log when a non-loopback
// address has no token.
func ListenAndServe(ctx context.Context, set Settings, ss ServeSettings, addr string) error {
	srv, err := New(set)
	if err != nil {
		return err
	}
	log := srv.set.Log // masked
	srv.probeUpstreams(ctx, probeTimeout)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("%w: %w", model.FieldErrorf("Addr", "serve: {Addr} %s", addr), err)
	}
	if host, _, _ := net.SplitHostPort(addr); !isLoopback(host) && set.Token == "" {
		log.Printf("serve: warning: listening on %s without a token (--token-env): anyone who can reach it can use it", ln.Addr())
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
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
				srv.Reload(ctx) // logs success or why it failed; bounded by Settings.ReloadTimeout
			}
		}
	}()
	log.Printf("serve: %s on http://%s", srv.Checkpoint(), ln.Addr())
	if set.Upstreams == "" {
		log.Printf("serve: no --upstreams: /v1/route and /v1/predict answer, /v1/chat/completions answers 503")
	}
	err = srv.Serve(ctx, ln, ss)
	log.Printf("serve: stopped")
	return err
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
