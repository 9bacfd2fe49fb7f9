package bench

import (
	"context"
	"errors"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/messages"
	linux "github.com/ptyactor/ptyactor/probes/linux"
)

// closeTree starts the three kinds of process a close must handle: a child
// that ignores SIGTERM, a double-forked grandchild that re-parents away
// from the shell (it stays in the shell's POSIX session), and a background
// job in its own process group.
const closeTree = "(trap '' TERM; sleep 300) & ( (sleep 300 &) & ); sleep 300 &"

// BenchmarkClose times svc.Kill of a session running closeTree, from the
// call until it returns (Kill returns once the tree is verified quiet), and
// counts survivors: recorded processes that /proc still shows running
// afterwards. The target is quiescence within disposeGraceMs +
// 200 ms and no survivor in 100 runs (-benchtime 100x). A TERM-ignoring
// child makes every close wait one full grace.
func BenchmarkClose(b *testing.B) {
	cfg := messages.DefaultConfig()
	cfg.DisposeGraceMs = 500
	svc, o := newService(b, cfg)
	ctx := context.Background()
	grace := messages.Ms(cfg.DisposeGraceMs)
	var samples []time.Duration
	survivors := 0
	for b.Loop() {
		b.StopTimer()
		sp, err := svc.Spawn(ctx, o, messages.SpawnRequest{})
		if err != nil {
			b.Fatal(err)
		}
		res, err := sp.Send(ctx, messages.SendRequest{Text: closeTree, Submit: true})
		if err != nil || res.WaitReason != messages.WaitStdinRead {
			b.Fatalf("starting the tree: %+v %v", res, err)
		}
		procs := waitCloseTree(b, sp.PID())
		b.StartTimer()

		t0 := time.Now()
		report, err := sp.Close(ctx, "bench")
		closed := !report.Joined
		d := time.Since(t0)

		b.StopTimer()
		samples = append(samples, d)
		if err != nil || !closed {
			b.Errorf("Kill: closed=%v err=%v", closed, err)
		}
		for _, id := range procs {
			if running(id) || slices.Contains(report.Survivors, id.PID) {
				survivors++
				b.Errorf("pid %d survived Kill", id.PID)
			}
		}
		b.StartTimer()
	}
	slices.Sort(samples)
	if len(samples) == 0 {
		return
	}
	p99 := samples[int(math.Ceil(0.99*float64(len(samples))))-1]
	over := 0
	for _, d := range samples {
		if d > grace+200*time.Millisecond {
			over++
		}
	}
	b.Logf("%d closes: min %v, median %v, p99 %v, max %v; %d over disposeGraceMs+200ms; %d survivors",
		len(samples), samples[0], samples[len(samples)/2], p99, samples[len(samples)-1], over, survivors)
	b.ReportMetric(ms(samples[len(samples)/2]), "close-median-ms")
	b.ReportMetric(ms(p99), "close-p99-ms")
	b.ReportMetric(float64(survivors), "survivors")
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// waitCloseTree waits until /proc shows closeTree running under shell and
// returns the identity of the shell and every other member of its POSIX
// session.
func waitCloseTree(b *testing.B, shell int) []linux.Identity {
	b.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		members, err := session(shell)
		if err != nil {
			b.Fatal(err)
		}
		deaf, away, job := false, false, false
		for _, s := range members {
			if s.Comm != "sleep" {
				continue
			}
			switch {
			case ignoresTERM(s.PID):
				deaf = true
			case s.PPID == shell && s.PGRP == s.PID:
				job = true
			case s.PPID != shell && !inSession(members, s.PPID):
				away = true // its parent subshell exited: re-parented away
			}
		}
		if deaf && away && job {
			ids := make([]linux.Identity, len(members))
			for i, s := range members {
				ids[i] = s.Identity()
			}
			return ids
		}
		if time.Now().After(deadline) {
			b.Fatalf("closeTree did not show up in /proc under shell %d: %+v", shell, members)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// session lists the live processes of POSIX session sid.
func session(sid int) ([]linux.Stat, error) {
	all, err := linux.ListStats(linux.FS{})
	if err != nil {
		return nil, err
	}
	var out []linux.Stat
	for _, s := range all {
		if s.Session == sid && s.Alive() {
			out = append(out, s)
		}
	}
	return out, nil
}

func inSession(members []linux.Stat, pid int) bool {
	return slices.ContainsFunc(members, func(s linux.Stat) bool { return s.PID == pid })
}

// running reports whether id still runs (a zombie or a reused pid does not).
func running(id linux.Identity) bool {
	s, err := linux.ReadStat(linux.FS{}, id.PID)
	if errors.Is(err, linux.ErrNotFound) {
		return false
	}
	return err != nil || (s.StartTime == id.StartTime && s.Alive())
}

// ignoresTERM reports whether SIGTERM is in the process's SigIgn mask.
func ignoresTERM(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return false
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "SigIgn:"); ok {
			mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return err == nil && mask&(1<<(uint(syscall.SIGTERM)-1)) != 0
		}
	}
	return false
}
