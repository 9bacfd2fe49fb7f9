package bench

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/backend/local"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// Take-over races: two console pages (as the view server drives a page:
// take, type, hand back, through the handle) and the agent (sends) race
// for one session's input for b.N rounds. Afterwards the session's event
// stream is replayed: every input event must come from the holder of the
// control event before it (a page's input under its own hold, the
// agent's only while the agent holds it). Reported: the takes, hand-backs
// and writes that got through, the refusals (CONTROL_HELD for the agent,
// CONTROL_STALE for a page whose hold moved on), and the violations
// (the bar: zero, and exactly one holder at any time).
func BenchmarkControlRaces(b *testing.B) {
	svc := testkit.Service(b, testkit.ServiceOptions{Config: messages.DefaultConfig(), Backends: []backend.Backend{local.New(local.Options{})}})
	o := testkit.Owner(b, svc, "bench")
	ctx := context.Background()
	sp, err := svc.Spawn(ctx, o, messages.SpawnRequest{})
	if err != nil {
		b.Fatal(err)
	}
	var takes, returns, typed, stale, held, agentSends atomic.Int64
	page := func(name string) {
		for range b.N {
			c, err := sp.TakeControl(ctx, messages.TakeControlRequest{Person: name})
			if err != nil {
				b.Error(err)
				return
			}
			takes.Add(1)
			// A comment line: nothing runs, the shell only reads it.
			switch err := c.Type(ctx, []byte("# "+name+"\r")); {
			case err == nil:
				typed.Add(1)
			case errors.Is(err, messages.ErrControlStale):
				stale.Add(1)
			default:
				b.Error(err)
				return
			}
			switch _, err := c.Return(ctx); {
			case err == nil:
				returns.Add(1)
			case errors.Is(err, messages.ErrControlStale):
				stale.Add(1)
			default:
				b.Error(err)
				return
			}
		}
	}
	b.ResetTimer()
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Go(func() { page("page-a") })
	wg.Go(func() { page("page-b") })
	agent := sync.WaitGroup{}
	agent.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			switch _, err := sp.Send(ctx, messages.SendRequest{Text: ": agent", Submit: true}); {
			case err == nil:
				agentSends.Add(1)
			case errors.Is(err, messages.ErrControlHeld):
				held.Add(1)
			default:
				b.Error(err)
				return
			}
		}
	})
	wg.Wait()
	close(done)
	agent.Wait()
	b.StopTimer()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	outOfTurn, controls, err := testkit.ControlWrites(ctx, sp)
	if err != nil {
		b.Fatal(err)
	}
	for _, s := range outOfTurn {
		b.Log(s)
	}
	violations := len(outOfTurn)
	b.ReportMetric(float64(takes.Load()), "takes")
	b.ReportMetric(float64(returns.Load()), "handbacks")
	b.ReportMetric(float64(typed.Load()), "page-writes")
	b.ReportMetric(float64(agentSends.Load()), "agent-sends")
	b.ReportMetric(float64(stale.Load()), "stale-refused")
	b.ReportMetric(float64(held.Load()), "held-refused")
	b.ReportMetric(float64(violations), "stale-writes")
	b.ReportMetric(float64(controls), "control-events")
	if violations > 0 {
		b.Errorf("%d inputs written by someone who did not hold the input", violations)
	}
}

// Take-over latency: the agent runs `sleep 30`; a person takes control
// (without SIGINT); how long from the take to the agent's taken_over
// result, median and max over b.N takes.
func BenchmarkTakeOverLatency(b *testing.B) {
	svc := testkit.Service(b, testkit.ServiceOptions{Config: messages.DefaultConfig(), Backends: []backend.Backend{local.New(local.Options{})}})
	o := testkit.Owner(b, svc, "bench")
	ctx := context.Background()
	sp, err := svc.Spawn(ctx, o, messages.SpawnRequest{})
	if err != nil {
		b.Fatal(err)
	}
	var lat []time.Duration
	b.ResetTimer()
	for range b.N {
		op, err := sp.StartSend(ctx, messages.SendRequest{Text: "sleep 30", Submit: true})
		if err != nil {
			b.Fatal(err)
		}
		for {
			sn, err := sp.Describe(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if sn.Activity != nil && sn.Activity.Program == "sleep" {
				break
			}
			time.Sleep(time.Millisecond) // polling a condition, not settling
		}
		start := time.Now()
		c, err := sp.TakeControl(ctx, messages.TakeControlRequest{})
		if err != nil {
			b.Fatal(err)
		}
		res, err := op.Result(ctx)
		lat = append(lat, time.Since(start))
		if err != nil || res.Cause != messages.CauseTakenOver {
			b.Fatalf("result %+v, %v", res, err)
		}
		if err := c.Type(ctx, []byte("\x03")); err != nil { // the person ends the sleep
			b.Fatal(err)
		}
		if _, err := c.Return(ctx); err != nil {
			b.Fatal(err)
		}
		if _, err := sp.Send(ctx, messages.SendRequest{Text: "true", Submit: true}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "take-to-result-p50-ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "take-to-result-max-ms")
}
