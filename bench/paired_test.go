package bench

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/messages"
)

// The paired benchmarks alternate one raw iteration and one ptyactor
// iteration inside a single loop, so a noisy neighbour slows both alike, and
// report the ratio of the medians: the figure the targets are stated in.

func median(s []time.Duration) time.Duration {
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// reportMedians adds the medians of two runs alternated in one loop, as
// NAME-median-ms for each name, and ratio of the two medians as ratioUnit.
func reportMedians(b *testing.B, names [2]string, first, second []time.Duration, ratioUnit string, ratio func(first, second time.Duration) float64) {
	if len(first) == 0 || len(second) == 0 {
		return
	}
	f, s := median(first), median(second)
	b.ReportMetric(float64(f.Microseconds())/1000, names[0]+"-median-ms")
	b.ReportMetric(float64(s.Microseconds())/1000, names[1]+"-median-ms")
	b.ReportMetric(ratio(f, s), ratioUnit)
}

// reportPair: ratio is ptyactor's median over the raw PTY's.
func reportPair(b *testing.B, raw, ours []time.Duration) {
	reportMedians(b, [2]string{"raw", "ptyactor"}, raw, ours, "ratio", func(r, o time.Duration) float64 { return float64(o) / float64(r) })
}

func BenchmarkSendEchoPaired(b *testing.B) {
	r := startRaw(b)
	defer r.close()
	if _, err := r.until(rawPS1); err != nil {
		b.Fatal(err)
	}
	sp := newSession(b, messages.DefaultConfig())
	ctx := context.Background()
	var raw, ours []time.Duration
	for b.Loop() {
		raw = append(raw, r.roundTrip(b, "echo hi", rawPS1))

		t0 := time.Now()
		res, err := sp.Send(ctx, messages.SendRequest{Text: "echo hi", Submit: true})
		if err != nil {
			b.Fatal(err)
		}
		ours = append(ours, time.Since(t0))
		if res.WaitReason != messages.WaitStdinRead {
			b.Fatalf("wait reason %s", res.WaitReason)
		}
	}
	reportPair(b, raw, ours)
}

func BenchmarkOpenPaired(b *testing.B) {
	svc, o := newService(b, messages.DefaultConfig())
	ctx := context.Background()
	var raw, ours []time.Duration
	for b.Loop() {
		raw = append(raw, openRaw(b))

		t0 := time.Now()
		sp, err := svc.Spawn(ctx, o, messages.SpawnRequest{})
		if err != nil {
			b.Fatal(err)
		}
		ours = append(ours, time.Since(t0))
		b.StopTimer()
		if _, err := sp.Close(ctx, "bench"); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	reportPair(b, raw, ours)
}

// BenchmarkREPLPaired is BenchmarkREPL with the two REPLs driven
// alternately.
func BenchmarkREPLPaired(b *testing.B) {
	r := startRawREPL(b)
	defer r.close()
	svc, o, id := replSession(b)
	ctx := context.Background()
	var raw, ours []time.Duration
	for b.Loop() {
		raw = append(raw, r.roundTrip(b, "1+1", ">>> "))

		t0 := time.Now()
		res, err := svc.Session(o, id).Send(ctx, messages.SendRequest{Text: "1+1", Submit: true})
		if err != nil {
			b.Fatal(err)
		}
		ours = append(ours, time.Since(t0))
		if res.WaitReason != messages.WaitStdinRead || !strings.Contains(res.Viewport, "2\n>>> ") {
			b.Fatalf("1+1 settled as %s with %q", res.WaitReason, res.Viewport)
		}
	}
	reportPair(b, raw, ours)
}
