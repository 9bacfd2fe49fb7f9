package bench

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/messages"
)

// BenchmarkTypedLines sends 100 lines to cat, typed line by line (each
// written once cat read the previous one and waits again) and, alternately
// in the same loop, all at once (Raw). The ratio is what typing costs: at
// most one probe round per line.
func BenchmarkTypedLines(b *testing.B) {
	sh := newSession(b, messages.DefaultConfig())
	ctx := context.Background()
	if res, err := sh.Send(ctx, messages.SendRequest{Text: "cat", Submit: true}); err != nil || res.Reader != "cat" {
		b.Fatalf("cat: %+v %v", res, err)
	}
	var in []string
	for i := range 100 {
		in = append(in, fmt.Sprintf("line %03d of the typed-input benchmark", i))
	}
	text := strings.Join(in, "\n")
	run := func(raw bool) time.Duration {
		t0 := time.Now()
		res, err := sh.Send(ctx, messages.SendRequest{Text: text, Submit: true, Raw: raw})
		d := time.Since(t0)
		if err != nil || res.WaitReason != messages.WaitStdinRead || res.Reader != "cat" {
			b.Fatalf("raw=%v: %s reader %q %v", raw, res.WaitReason, res.Reader, err)
		}
		return d
	}
	var typed, raw []time.Duration
	for b.Loop() {
		typed = append(typed, run(false))
		raw = append(raw, run(true))
	}
	t, r := median(typed), median(raw)
	b.ReportMetric(float64(t.Microseconds())/1000, "typed-median-ms")
	b.ReportMetric(float64(r.Microseconds())/1000, "raw-median-ms")
	b.ReportMetric(float64(t)/float64(r), "ratio")
}
