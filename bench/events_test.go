package bench

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/actors/protocol"
	"github.com/ptyactor/ptyactor/messages"
	"golang.org/x/sys/unix"
)

// BenchmarkWakeLatency measures how long after a program starts waiting
// for input its owner's subscriber hears of it: python prints a
// CLOCK_MONOTONIC timestamp and goes back to reading its terminal, and the
// subscriber takes the same clock when the settlement event reaches it.
// The print-to-read gap (microseconds) is included. Median against a
// 5 ms aim.
func BenchmarkWakeLatency(b *testing.B) {
	sh := newSession(b, messages.DefaultConfig())
	ctx := context.Background()
	if res, err := sh.Send(ctx, messages.SendRequest{Text: "python3 -q", Submit: true}); err != nil || res.Reader != "python3" {
		b.Fatalf("python3: %+v %v", res, err)
	}
	if _, err := sh.Send(ctx, messages.SendRequest{Text: "import time", Submit: true}); err != nil {
		b.Fatal(err)
	}
	sub := sh.Subscribe()
	defer sub.Close()
	var samples []time.Duration
	for b.Loop() {
		op, err := sh.StartSend(ctx, messages.SendRequest{Text: "print(time.monotonic_ns())", Submit: true})
		if err != nil {
			b.Fatal(err)
		}
		var heard int64
		for {
			evt, err := sub.Next(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if e, ok := evt.(*protocol.EventSendSettled); ok && e.Ticket == op.Ticket() {
				var ts unix.Timespec
				_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
				heard = ts.Nano()
				break
			}
		}
		res, err := op.Result(ctx)
		if err != nil {
			b.Fatal(err)
		}
		printed := int64(-1)
		for _, l := range strings.Split(res.Viewport, "\n") {
			if v, err := strconv.ParseInt(strings.TrimSpace(l), 10, 64); err == nil && v > 1e9 {
				printed = v
			}
		}
		if printed < 0 {
			b.Fatalf("no timestamp in %q", res.Viewport)
		}
		samples = append(samples, time.Duration(heard-printed))
	}
	b.ReportMetric(float64(median(samples).Microseconds())/1000, "median-ms")
}
