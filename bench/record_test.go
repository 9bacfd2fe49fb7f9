package bench

import (
	"context"
	"fmt"
	"path/filepath"
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

// The recording's cost: one session recorded and one not, in the same
// service, alternated in one loop (a noisy neighbour slows both alike);
// the ratio is the recorded median over the unrecorded one.

// recordedPair spawns a recorded and an unrecorded session.
func recordedPair(b *testing.B) (on, off *actors.Session) {
	b.Helper()
	dir := filepath.Join(b.TempDir(), "recordings")
	rec := local.New(local.Options{Type: "recorded", Record: local.Record{Dir: dir}})
	svc := testkit.Service(b, testkit.ServiceOptions{Config: messages.DefaultConfig(), Backends: []backend.Backend{local.New(local.Options{}), rec}})
	o := testkit.Owner(b, svc, "bench")
	ctx := context.Background()
	var err error
	if on, err = svc.Spawn(ctx, o, messages.SpawnRequest{Type: "recorded"}); err != nil {
		b.Fatal(err)
	}
	if off, err = svc.Spawn(ctx, o, messages.SpawnRequest{Type: "shell"}); err != nil {
		b.Fatal(err)
	}
	return on, off
}

// reportRecorded: off/on-speed is the unrecorded median over the recorded
// one.
func reportRecorded(b *testing.B, on, off []time.Duration) {
	reportMedians(b, [2]string{"off", "on"}, off, on, "off/on-speed", func(f, n time.Duration) float64 { return float64(f) / float64(n) })
}

// BenchmarkRecordFloodPaired: a 2 MB flood through a recorded session and
// an unrecorded one. off/on-speed is the recorded session's throughput as a
// fraction of the unrecorded one's (the bar: at least 0.95).
func BenchmarkRecordFloodPaired(b *testing.B) {
	const n = 300000
	cmd := fmt.Sprintf("seq 1 %d", n)
	on, off := recordedPair(b)
	ctx := context.Background()
	var tOn, tOff []time.Duration
	flood := func(sh *actors.Session) time.Duration {
		t0 := time.Now()
		res, err := sh.Send(ctx, messages.SendRequest{Text: cmd, Submit: true})
		if err != nil || !strings.Contains(res.Viewport, strconv.Itoa(n)) {
			b.Fatalf("flood: %v, %s", err, res.WaitReason)
		}
		return time.Since(t0)
	}
	for b.Loop() {
		tOff = append(tOff, flood(off))
		tOn = append(tOn, flood(on))
	}
	reportRecorded(b, tOn, tOff)
}

// BenchmarkRecordEchoPaired: `echo hi` in a recorded session and an
// unrecorded one (the bar: the recorded within 5 %, off/on-speed ≥ 0.95).
func BenchmarkRecordEchoPaired(b *testing.B) {
	on, off := recordedPair(b)
	ctx := context.Background()
	var tOn, tOff []time.Duration
	echo := func(sh *actors.Session) time.Duration {
		t0 := time.Now()
		res, err := sh.Send(ctx, messages.SendRequest{Text: "echo hi", Submit: true})
		if err != nil || res.WaitReason != messages.WaitStdinRead {
			b.Fatalf("echo: %v, %s", err, res.WaitReason)
		}
		return time.Since(t0)
	}
	for b.Loop() {
		tOff = append(tOff, echo(off))
		tOn = append(tOn, echo(on))
	}
	reportRecorded(b, tOn, tOff)
}
