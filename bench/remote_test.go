package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/actors"
	"github.com/ptyactor/ptyactor/actors/remote"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// Sessions on a session host (ptyhost) over loopback, against local
// sessions of the same service in the same run. The host is a separate
// process built here. Run with -bench only; see README "Many machines".

// startBenchHost runs a loopback ptyhost without logs or client grace;
// see testkit.StartHost.
func startBenchHost(b testing.TB) *testkit.Host {
	b.Helper()
	return testkit.StartHost(b, testkit.Loopback("-log-level", "disabled", "-client-grace", "0s")...)
}

// remoteService is newService with hosts registered as h0, h1, ...
func remoteService(b testing.TB, hosts ...*testkit.Host) (*actors.Service, messages.Owner) {
	b.Helper()
	svc, o := newService(b, messages.DefaultConfig())
	for i, h := range hosts {
		if err := rc(svc).RegisterHost(context.Background(), fmt.Sprintf("h%d", i), h.Addr(), nil, remote.HostInsecure()); err != nil {
			b.Fatal(err)
		}
	}
	return svc, o
}

// spawnPair spawns a local session and one on host h0, for a paired
// benchmark.
func spawnPair(b *testing.B, svc *actors.Service, o messages.Owner) (local, remote *actors.Session) {
	b.Helper()
	ctx := context.Background()
	local, err := svc.Spawn(ctx, o, messages.SpawnRequest{})
	if err != nil {
		b.Fatal(err)
	}
	remote, err = svc.Spawn(ctx, o, messages.SpawnRequest{Host: "h0"})
	if err != nil {
		b.Fatal(err)
	}
	return local, remote
}

// BenchmarkRemoteSendEchoPaired alternates an echo on a local session and
// on a session of a loopback host in one loop, and reports the median of
// the per-pair differences: what the host adds to a send.
func BenchmarkRemoteSendEchoPaired(b *testing.B) {
	svc, o := remoteService(b, startBenchHost(b))
	ctx := context.Background()
	local, remote := spawnPair(b, svc, o)
	send := func(sh *actors.Session) time.Duration {
		t0 := time.Now()
		res, err := sh.Send(ctx, messages.SendRequest{Text: "echo hi", Submit: true})
		d := time.Since(t0)
		if err != nil || res.WaitReason != messages.WaitStdinRead {
			b.Fatalf("echo: %+v %v", res, err)
		}
		return d
	}
	var loc, rem, added []time.Duration
	for b.Loop() {
		l, r := send(local), send(remote)
		loc, rem, added = append(loc, l), append(rem, r), append(added, r-l)
	}
	b.ReportMetric(ms(median(loc)), "local-median-ms")
	b.ReportMetric(ms(median(rem)), "remote-median-ms")
	b.ReportMetric(ms(median(added)), "added-median-ms")
}

// BenchmarkRemoteFloodPaired floods seq output through a local session
// and a host's session alternately, and reports each one's MB/s (of the
// medians), their ratio, and the client's peak RSS growth over the run.
func BenchmarkRemoteFloodPaired(b *testing.B) {
	const n = 300000
	cmd := fmt.Sprintf("seq 1 %d", n)
	svc, o := remoteService(b, startBenchHost(b))
	ctx := context.Background()
	local, remote := spawnPair(b, svc, o)
	flood := func(sh *actors.Session) time.Duration {
		t0 := time.Now()
		res, err := sh.Send(ctx, messages.SendRequest{Text: cmd, Submit: true})
		d := time.Since(t0)
		if err != nil || res.WaitReason != messages.WaitStdinRead || !strings.Contains(res.Viewport, strconv.Itoa(n)) {
			b.Fatalf("flood: %s %v; tail %q", res.WaitReason, err, tail(res.Viewport))
		}
		return d
	}
	base := resetPeakRSS(b)
	var loc, rem []time.Duration
	for b.Loop() {
		loc, rem = append(loc, flood(local)), append(rem, flood(remote))
	}
	bytes := float64(floodBytes(n))
	lm, rm := bytes/median(loc).Seconds()/1e6, bytes/median(rem).Seconds()/1e6
	b.ReportMetric(lm, "local-MB/s")
	b.ReportMetric(rm, "remote-MB/s")
	b.ReportMetric(rm/lm, "ratio")
	b.ReportMetric(float64(peakRSS(b)-base)/(1<<20), "client-peak-rss-growth-MiB")
}

// BenchmarkRemoteManySessions spawns 500 sessions across two hosts
// (PTYACTOR_BENCH_REMOTE_SESSIONS overrides the count) and sends to all of
// them at once; it reports the sends' p50 and p99 and fails on any error.
func BenchmarkRemoteManySessions(b *testing.B) {
	count := 500
	if v, err := strconv.Atoi(os.Getenv("PTYACTOR_BENCH_REMOTE_SESSIONS")); err == nil && v > 0 {
		count = v
	}
	svc, o := remoteService(b, startBenchHost(b), startBenchHost(b))
	ctx := context.Background()
	sessions := make([]*actors.Session, count)
	spawnStart := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, count)
	sem := make(chan struct{}, 16)
	for i := range sessions {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			sh, err := svc.Spawn(ctx, o, messages.SpawnRequest{Host: fmt.Sprintf("h%d", i%2)})
			if err != nil {
				errs <- err
				return
			}
			sessions[i] = sh
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatalf("spawn: %v", err)
	}
	spawnAll := time.Since(spawnStart)
	var all []time.Duration
	for b.Loop() {
		lat := make([]time.Duration, count)
		errs := make(chan error, count)
		start := make(chan struct{})
		for i, sh := range sessions {
			wg.Go(func() {
				<-start
				t0 := time.Now()
				res, err := sh.Send(ctx, messages.SendRequest{Text: "echo hi", Submit: true})
				lat[i] = time.Since(t0)
				if err == nil && res.WaitReason != messages.WaitStdinRead {
					err = fmt.Errorf("settled as %s", res.WaitReason)
				}
				if err != nil {
					errs <- err
				}
			})
		}
		close(start)
		wg.Wait()
		close(errs)
		if err := <-errs; err != nil {
			b.Fatalf("send (%d failed): %v", len(errs)+1, err)
		}
		all = append(all, lat...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	b.ReportMetric(ms(all[len(all)/2]), "p50-ms")
	b.ReportMetric(ms(all[len(all)*99/100]), "p99-ms")
	b.ReportMetric(ms(all[len(all)-1]), "max-ms")
	b.ReportMetric(spawnAll.Seconds(), "spawn-all-s")
}

// BenchmarkRemoteHostLoss kills a host (SIGKILL) under a pending send,
// once per iteration, and reports the median and the longest time from
// the kill to the send's error matching ErrHostLost (the bar: 2 s).
func BenchmarkRemoteHostLoss(b *testing.B) {
	svc, o := newService(b, messages.DefaultConfig())
	ctx := context.Background()
	var took []time.Duration
	i := 0
	for b.Loop() {
		b.StopTimer()
		h := startBenchHost(b)
		name := fmt.Sprintf("lost%d", i)
		i++
		if err := rc(svc).RegisterHost(ctx, name, h.Addr(), nil, remote.HostInsecure()); err != nil {
			b.Fatal(err)
		}
		sh, err := svc.Spawn(ctx, o, messages.SpawnRequest{Host: name})
		if err != nil {
			b.Fatal(err)
		}
		op, err := sh.StartSend(ctx, messages.SendRequest{Text: "echo start''ed; sleep 30", Submit: true})
		if err != nil {
			b.Fatal(err)
		}
		for seen := ""; !strings.Contains(seen, "started"); {
			d, err := op.ReadOutput(ctx)
			if err != nil {
				b.Fatal(err)
			}
			seen += d.Delta
		}
		b.StartTimer()
		t0 := time.Now()
		_ = h.Signal(syscall.SIGKILL)
		_, err = op.Result(ctx)
		took = append(took, time.Since(t0))
		b.StopTimer()
		<-h.Done()
		if !errors.Is(err, messages.ErrHostLost) {
			b.Fatalf("send on a killed host: %v", err)
		}
		if _, err := sh.Close(ctx, "written off"); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(ms(median(took)), "median-ms")
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	b.ReportMetric(ms(took[len(took)-1]), "max-ms")
}

// rc is svc's remote client, attached on first use.
func rc(svc *actors.Service) *remote.Client {
	if c := remote.Get(svc); c != nil {
		return c
	}
	c, err := remote.Attach(svc)
	if err != nil {
		panic(err)
	}
	return c
}
