package bench

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/backend/faulty"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// BenchmarkRuntimeSend measures the runtime's own share of a send: the
// facade, the session's reservation, the send actor, the facts it reacts
// to and the settlement, on the scripted backend (no PTY, no shell). Its
// session answers a line at once with its echo and a verified prompt, so
// what is left is the actors' path. allocs/op counts the whole path.
func BenchmarkRuntimeSend(b *testing.B) {
	svc := testkit.Service(b, testkit.ServiceOptions{Config: messages.DefaultConfig(), Backends: []backend.Backend{faulty.New("shell")}})
	ctx := context.Background()
	sh, err := svc.Spawn(ctx, testkit.Owner(b, svc, "bench"), messages.SpawnRequest{})
	if err != nil {
		b.Fatal(err)
	}
	req := messages.SendRequest{Text: "echo hi", Submit: true}
	var samples []time.Duration
	b.ReportAllocs()
	for b.Loop() {
		t0 := time.Now()
		res, err := sh.Send(ctx, req)
		samples = append(samples, time.Since(t0))
		if err != nil || res.WaitReason != messages.WaitStdinRead {
			b.Fatalf("send: %v %s, want stdin_read", err, res.WaitReason)
		}
	}
	sort.Slice(samples, func(i, j int) bool { return samples[i] < samples[j] })
	b.ReportMetric(float64(samples[len(samples)/2].Nanoseconds())/1000, "median-us")
}
