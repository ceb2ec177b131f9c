package serve

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jeirt/jeirt/encoder"
	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
)

// BenchmarkServeLoad is the bounded load test of scripts/bench-serve.sh:
// a server on a loopback listener and 64 concurrent clients sending
// single-query POST /v1/route requests (hash encoder, 12 models, a 256→64→32
// adapter, an out-of-domain reference of 500 questions) until
// JEIRT_BENCH_REQUESTS (default 100,000) have been answered or
// JEIRT_BENCH_SECONDS (default 300) have passed. It reports requests/s,
// p50/p99 latency, errors and the process RSS at the start, middle and end.
// Run it with -benchtime=1x: one iteration is the whole load test.
func BenchmarkServeLoad(b *testing.B) {
	total := envInt("JEIRT_BENCH_REQUESTS", 100000)
	limit := time.Duration(envInt("JEIRT_BENCH_SECONDS", 300)) * time.Second
	clients := envInt("JEIRT_BENCH_CLIENTS", 64)
	dir := b.TempDir()
	ck := filepath.Join(dir, "ck")
	writeRandomCheckpoint(b, ck, 256, 64, 32, 12)
	srv, err := New(Settings{Checkpoint: ck})
	if err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln, ServeSettings{}) }()
	defer func() { stop(); <-done }()
	url := "http://" + ln.Addr().String() + "/v1/route"
	words := strings.Fields("fix the off by one error in pagination helper when parsing nested json config files raise a clear exception " +
		"add support for timezone aware datetimes in the scheduler and make the cache thread safe under concurrent writes")
	bodies := make([][]byte, 1024)
	rng := rand.New(rand.NewPCG(1, 2))
	for k := range bodies {
		n := 8 + rng.IntN(24)
		ws := make([]string, n)
		for t := range ws {
			ws[t] = words[rng.IntN(len(words))]
		}
		bodies[k] = []byte(fmt.Sprintf(`{"id":"%d","text":%q}`, k, strings.Join(ws, " ")))
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: clients, MaxIdleConns: clients}}

	for b.Loop() {
		var next, errs atomic.Int64
		lat := make([][]time.Duration, clients)
		rss := []int64{rssKB()}
		var mid sync.Once
		deadline := time.Now().Add(limit)
		start, cpu0 := time.Now(), cpuTime()
		var wg sync.WaitGroup
		for c := 0; c < clients; c++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					k := next.Add(1)
					if k > int64(total) || time.Now().After(deadline) {
						return
					}
					if k == int64(total/2) {
						mid.Do(func() { rss = append(rss, rssKB()) })
					}
					t0 := time.Now()
					resp, err := client.Post(url, "application/json", bytes.NewReader(bodies[k%int64(len(bodies))]))
					if err != nil {
						errs.Add(1)
						continue
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 200 {
						errs.Add(1)
					}
					lat[c] = append(lat[c], time.Since(t0))
				}
			}()
		}
		wg.Wait()
		el, cpu := time.Since(start), cpuTime()-cpu0
		rss = append(rss, rssKB())
		all := slices.Concat(lat...)
		slices.Sort(all)
		n := len(all)
		if n == 0 {
			b.Fatal("no request answered")
		}
		q := func(p float64) time.Duration { return all[min(n-1, int(p*float64(n)))] }
		rps := float64(n) / el.Seconds()
		b.ReportMetric(rps, "req/s")
		b.ReportMetric(float64(q(0.5).Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(q(0.99).Microseconds())/1000, "p99-ms")
		b.ReportMetric(float64(errs.Load()), "errors")
		b.ReportMetric(ms(cpu)/float64(n), "cpu-ms/req")
		fmt.Printf("serve load: %d requests (%d clients) in %.2f s: %.0f req/s, p50 %.2f ms, p99 %.2f ms, max %.2f ms, %d errors; RSS start/middle/end %v KiB\n",
			n, clients, el.Seconds(), rps, ms(q(0.5)), ms(q(0.99)), ms(all[n-1]), errs.Load(), rss)
		fmt.Printf("serve load: process CPU %.1f s (server and clients together): %.3f CPU-ms per request, %.2f of a core on average\n",
			cpu.Seconds(), ms(cpu)/float64(n), cpu.Seconds()/el.Seconds())
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// cpuTime is the user+system CPU time of this process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// rssKB is the resident set size of this process (Linux; 0 elsewhere).
func rssKB() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			v, _ := strconv.ParseInt(strings.Fields(l)[1], 10, 64)
			return v
		}
	}
	return 0
}

// writeRandomCheckpoint writes a checkpoint on the hash encoder of width in
// with random adapter weights and model rows: routing costs what it costs
// with a trained one.
func writeRandomCheckpoint(tb testing.TB, dir string, in, hidden, dim, models int) {
	tb.Helper()
	enc, _ := encoder.NewHash(in)
	rng := rand.New(rand.NewPCG(3, 4))
	vec := func(n int, s float64) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.NormFloat64() * s)
		}
		return v
	}
	m := &model.JEIRT{InputDim: in, Hidden: hidden, Dim: dim, W1: vec(hidden*in, 0.1), C1: vec(hidden, 0.1),
		W2: vec(dim*hidden, 0.2), C2: vec(dim, 0.1), M: vec(models*dim, 0.5), Items: []string{"i0"}, Q: vec(dim, 0.5)}
	for i := 0; i < models; i++ {
		m.Models = append(m.Models, fmt.Sprintf("model-%02d", i))
	}
	ck := &checkpoint.Checkpoint{Model: m, Manifest: checkpoint.Manifest{
		Encoder: checkpoint.EncoderInfo{Spec: "hash:" + strconv.Itoa(in), Fingerprint: enc.Fingerprint(), Dim: in}}}
	// An out-of-domain reference of 500 training questions, so every request
	// pays for the check as it does with a trained checkpoint.
	dom, err := checkpoint.NewDomain(vec(500*in, 1), in, nil, 0)
	if err != nil {
		tb.Fatal(err)
	}
	b, err := dom.Marshal()
	if err != nil {
		tb.Fatal(err)
	}
	ck.Files = map[string][]byte{checkpoint.DomainFile: b}
	if err := ck.Write(dir, false); err != nil {
		tb.Fatal(err)
	}
}
