package bench

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/actors"
	"github.com/ptyactor/ptyactor/messages"
)

// BenchmarkREPL: inside a session, a python3 REPL evaluates 1+1. The raw
// baseline drives the same REPL over a plain PTY and reads until ">>> "
// reappears: it knows the prompt; ptyactor does not (the exact tier proves
// python is blocked reading the terminal again).
func BenchmarkREPL(b *testing.B) {
	b.Run("raw", func(b *testing.B) {
		r := startRawREPL(b)
		defer r.close()
		var samples []time.Duration
		for b.Loop() {
			samples = append(samples, r.roundTrip(b, "1+1", ">>> "))
		}
		reportMedian(b, samples)
	})
	b.Run("ptyactor", func(b *testing.B) {
		svc, o, id := replSession(b)
		ctx := context.Background()
		var samples []time.Duration
		for b.Loop() {
			t0 := time.Now()
			res, err := svc.Session(o, id).Send(ctx, messages.SendRequest{Text: "1+1", Submit: true})
			if err != nil {
				b.Fatal(err)
			}
			samples = append(samples, time.Since(t0))
			if res.WaitReason != messages.WaitStdinRead || !strings.Contains(res.Viewport, "2\n>>> ") {
				b.Fatalf("1+1 settled as %s with %q", res.WaitReason, res.Viewport)
			}
		}
		reportMedian(b, samples)
	})
}

// startRawREPL is the raw baseline's python3 REPL at its first prompt.
func startRawREPL(b *testing.B) *rawShell {
	r := startRaw(b)
	if _, err := r.until(rawPS1); err != nil {
		r.close()
		b.Fatal(err)
	}
	if err := r.send("python3 -q"); err != nil {
		r.close()
		b.Fatal(err)
	}
	if _, err := r.until(">>> "); err != nil {
		r.close()
		b.Fatal(err)
	}
	return r
}

func replSession(b testing.TB) (*actors.Service, messages.Owner, messages.SessionID) {
	cfg := messages.DefaultConfig()
	cfg.IdleSilenceMs = 10000 // only the exact tier may settle fast
	svc, o := newService(b, cfg)
	sp, err := svc.Spawn(context.Background(), o, messages.SpawnRequest{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	res, err := sp.Send(ctx, messages.SendRequest{Text: "python3 -q", Submit: true})
	if err != nil || res.WaitReason != messages.WaitStdinRead {
		b.Fatalf("python3 -q: %+v %v", res, err)
	}
	return svc, o, sp.ID()
}

// BenchmarkPremature counts sends declared ready before the command
// finished: `sleep 1; echo done` in the shell, and the same pause inside
// the python REPL (where only the exact tier can settle). Must be 0. Run
// it long with -benchtime 200x.
func BenchmarkPremature(b *testing.B) {
	b.Run("shell", func(b *testing.B) {
		cfg := messages.DefaultConfig()
		cfg.IdleSilenceMs = 10000
		sp := newSession(b, cfg)
		ctx := context.Background()
		premature := 0
		for b.Loop() {
			res, err := sp.Send(ctx, messages.SendRequest{Text: "sleep 1; echo do''ne", Submit: true})
			if err != nil {
				b.Fatal(err)
			}
			if !strings.Contains(res.Viewport, "\ndone\n") {
				premature++
			}
		}
		b.ReportMetric(float64(premature), "premature")
	})
	b.Run("repl", func(b *testing.B) {
		svc, o, id := replSession(b)
		ctx := context.Background()
		if _, err := svc.Session(o, id).Send(ctx, messages.SendRequest{Text: "import time", Submit: true}); err != nil {
			b.Fatal(err)
		}
		premature := 0
		for b.Loop() {
			res, err := svc.Session(o, id).Send(ctx, messages.SendRequest{Text: "time.sleep(1); print('do' 'ne')", Submit: true})
			if err != nil {
				b.Fatal(err)
			}
			if res.WaitReason != messages.WaitStdinRead || !strings.Contains(res.Viewport, "\ndone\n") {
				premature++
			}
		}
		b.ReportMetric(float64(premature), "premature")
	})
}
