package bench

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/actors"
	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/backend/local"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
)

func newService(b testing.TB, cfg messages.Config) (*actors.Service, messages.Owner) {
	b.Helper()
	// ErrHostLost: the remote benchmarks kill hosts.
	svc := testkit.Service(b, testkit.ServiceOptions{Config: cfg, Backends: []backend.Backend{local.New(local.Options{})}, Tolerate: []error{messages.ErrHostLost}})
	return svc, testkit.Owner(b, svc, "bench")
}

// newSession is one shell session in a service of its own (newService).
func newSession(b testing.TB, cfg messages.Config) *actors.Session {
	b.Helper()
	svc, o := newService(b, cfg)
	sp, err := svc.Spawn(context.Background(), o, messages.SpawnRequest{})
	if err != nil {
		b.Fatal(err)
	}
	return sp
}

// reportMedian adds the median per-op latency, robust against the noisy
// shared machines these runs happen on.
func reportMedian(b *testing.B, samples []time.Duration) {
	if len(samples) == 0 {
		return
	}
	sort.Slice(samples, func(i, j int) bool { return samples[i] < samples[j] })
	b.ReportMetric(float64(samples[len(samples)/2].Microseconds())/1000, "median-ms")
}

func BenchmarkOpen(b *testing.B) {
	b.Run("raw", func(b *testing.B) {
		var samples []time.Duration
		for b.Loop() {
			samples = append(samples, openRaw(b))
		}
		reportMedian(b, samples)
	})
	b.Run("ptyactor", func(b *testing.B) {
		svc, o := newService(b, messages.DefaultConfig())
		ctx := context.Background()
		var samples []time.Duration
		for b.Loop() {
			t0 := time.Now()
			sp, err := svc.Spawn(ctx, o, messages.SpawnRequest{})
			if err != nil {
				b.Fatal(err)
			}
			samples = append(samples, time.Since(t0))
			b.StopTimer()
			if _, err := sp.Close(ctx, "bench"); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		reportMedian(b, samples)
	})
}

func BenchmarkSendEcho(b *testing.B) {
	b.Run("raw", func(b *testing.B) {
		r := startRaw(b)
		defer r.close()
		if _, err := r.until(rawPS1); err != nil {
			b.Fatal(err)
		}
		var samples []time.Duration
		for b.Loop() {
			samples = append(samples, r.roundTrip(b, "echo hi", rawPS1))
		}
		reportMedian(b, samples)
	})
	b.Run("ptyactor", func(b *testing.B) {
		sp := newSession(b, messages.DefaultConfig())
		ctx := context.Background()
		var samples []time.Duration
		for b.Loop() {
			t0 := time.Now()
			res, err := sp.Send(ctx, messages.SendRequest{Text: "echo hi", Submit: true})
			if err != nil {
				b.Fatal(err)
			}
			samples = append(samples, time.Since(t0))
			if res.WaitReason != messages.WaitStdinRead {
				b.Fatalf("wait reason %s, want stdin_read", res.WaitReason)
			}
		}
		reportMedian(b, samples)
	})
}

// floodBytes is what `seq 1 n` prints (without the PTY's CRs).
func floodBytes(n int) int64 {
	var total int64
	for i := 1; i <= n; i++ {
		total += int64(len(strconv.Itoa(i)) + 1)
	}
	return total
}

func BenchmarkFlood(b *testing.B) {
	const n = 300000
	cmd := fmt.Sprintf("seq 1 %d", n)
	b.Run("raw", func(b *testing.B) {
		r := startRaw(b)
		defer r.close()
		if _, err := r.until(rawPS1); err != nil {
			b.Fatal(err)
		}
		b.SetBytes(floodBytes(n))
		for b.Loop() {
			if err := r.send(cmd); err != nil {
				b.Fatal(err)
			}
			if _, err := r.until(rawPS1); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ptyactor", func(b *testing.B) {
		sp := newSession(b, messages.DefaultConfig())
		ctx := context.Background()
		b.SetBytes(floodBytes(n))
		for b.Loop() {
			res, err := sp.Send(ctx, messages.SendRequest{Text: cmd, Submit: true})
			if err != nil {
				b.Fatal(err)
			}
			if res.WaitReason != messages.WaitStdinRead || !strings.Contains(res.Viewport, strconv.Itoa(n)) {
				b.Fatalf("flood settled as %s; viewport tail %q", res.WaitReason, tail(res.Viewport))
			}
		}
	})
}

// BenchmarkFloodRSS floods 200 MB through one session and reports how far
// the host's peak RSS rose above its level before the flood.
func BenchmarkFloodRSS(b *testing.B) {
	cfg := messages.DefaultConfig()
	sp := newSession(b, cfg)
	ctx := context.Background()
	const total = 200_000_000
	line := strings.Repeat("x", 99)
	cmd := fmt.Sprintf("yes %s | head -c %d", line, total)
	b.SetBytes(total)
	var growth int64
	for b.Loop() {
		base := resetPeakRSS(b)
		res, err := sp.Send(ctx, messages.SendRequest{Text: cmd, Submit: true})
		if err != nil {
			b.Fatal(err)
		}
		if res.WaitReason != messages.WaitStdinRead {
			b.Fatalf("flood settled as %s", res.WaitReason)
		}
		if g := peakRSS(b) - base; g > growth {
			growth = g
		}
	}
	limit := int64(cfg.ScrollbackMaxBytes + cfg.MaxReadBytes + 32<<20)
	b.ReportMetric(float64(growth)/(1<<20), "peak-rss-growth-MiB")
	b.ReportMetric(float64(limit)/(1<<20), "limit-MiB")
	if growth > limit {
		b.Errorf("peak RSS grew by %d bytes, over the limit %d", growth, limit)
	}
}

// resetPeakRSS resets the kernel's high-water mark (clear_refs 5) and
// returns the current RSS.
func resetPeakRSS(b testing.TB) int64 {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Fatalf("cannot reset peak RSS: %v", err)
	}
	return statusKB(b, "VmRSS:")
}

func peakRSS(b testing.TB) int64 { return statusKB(b, "VmHWM:") }

func statusKB(b testing.TB, field string) int64 { return statusValue(b, field) << 10 }

// statusValue is the first number of a /proc/self/status field.
func statusValue(b testing.TB, field string) int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, field) {
			f := strings.Fields(l)
			v, _ := strconv.ParseInt(f[1], 10, 64)
			return v
		}
	}
	b.Fatalf("no %s in /proc/self/status", field)
	return 0
}

func tail(s string) string {
	if len(s) > 200 {
		return s[len(s)-200:]
	}
	return s
}
