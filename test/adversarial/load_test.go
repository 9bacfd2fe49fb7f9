package adversarial

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/tools"
)

// floodCmd prints floodBytes of output (lines of 160 x) and a mark.
const (
	floodBytes = 16 << 20
	floodCmd   = "head -c 16777216 /dev/zero | tr '\\0' x | fold -w 160; echo flood-done"
)

// Load: 200 viewers join and leave in a loop (from 20 source addresses,
// operators and share links) while one session floods 16 MiB and the
// agent sends to another; a viewer that never reads is among them. What
// must hold: every send completes, the flood finishes, the stalled
// viewer is dropped (its socket closed by the server) within a bound,
// and once the viewers are gone the server's descriptors are back at
// their baseline. The figures (send latency, flood speed, the drop's
// time, threads) are logged, not asserted: speed is the machine's.
func TestLoadViewersChurnDuringFlood(t *testing.T) {
	s := Start(t, Options{})
	c := s.MCP()
	flood, ping := c.Open(), c.Open()
	cookie := s.Login()
	token, _ := c.Share(flood, map[string]any{"label": "load"})

	pings := func(n int) []time.Duration {
		var d []time.Duration
		for i := range n {
			at := time.Now()
			if r := c.Send(ping, "echo ping-"+strconv.Itoa(i)); !strings.Contains(r.Text, "ping-"+strconv.Itoa(i)) {
				t.Fatalf("ping %d: %q", i, r.Text)
			}
			d = append(d, time.Since(at))
		}
		return d
	}
	runFlood := func() time.Duration {
		at := time.Now()
		r := c.OK(tools.TerminalSend, map[string]any{"sessionId": flood, "text": floodCmd})
		if !strings.Contains(r.Text, "flood-done") {
			t.Fatalf("the flood did not finish: %q", tail(r.Text, 300))
		}
		return time.Since(at)
	}
	idleSends := pings(5)
	idleFlood := runFlood()
	// The baseline once the sessions have run (their first flood opens
	// what they keep: record segments, PTY handles).
	s.tr.CloseIdleConnections()
	base := s.Proc()
	baseFDs := fdTargets(s.PID)

	// The viewers.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var stopOnce sync.Once
	halt := func() { stopOnce.Do(func() { close(stop) }); wg.Wait() }
	t.Cleanup(halt) // a failed assertion must not leave the viewers running
	var joins, refused atomic.Int64
	var firstRefusal atomic.Value // the first refused join's error
	srcs := make([]*Server, 20)
	for i := range srcs {
		srcs[i] = s.From(fmt.Sprintf("127.0.3.%d", i+1))
	}
	const nviewers = 200
	for i := range nviewers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			src := srcs[i%len(srcs)]
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := churnOnce(ctx(t), src, flood, token, cookie, i%2 == 0); err == nil {
					joins.Add(1)
				} else if refused.Add(1) == 1 {
					firstRefusal.Store(err.Error())
				}
			}
		}()
	}
	stalled := stalledViewer(t, s, flood, cookie)

	cpuBefore, selfBefore := s.Proc().CPU, cpuTime(os.Getpid())
	var busySends []time.Duration
	var busyFlood time.Duration
	done := make(chan struct{})
	go func() {
		defer close(done)
		busyFlood = runFlood()
	}()
	busySends = pings(10)
	<-done
	t.Logf("CPU during the busy flood: server %v, this test process %v", s.Proc().CPU-cpuBefore, cpuTime(os.Getpid())-selfBefore)
	dropped := stalled.waitDropped(t, 60*time.Second)
	stalled.conn.Close()
	halt()
	for _, src := range srcs {
		src.tr.CloseIdleConnections()
	}
	s.tr.CloseIdleConnections()

	t.Logf("agent send latency: idle median %v (max %v); with 200 viewers churning and the flood median %v (max %v)",
		median(idleSends), slices.Max(idleSends), median(busySends), slices.Max(busySends))
	t.Logf("flood of %d MiB: idle %v (%.1f MiB/s); with 200 viewers churning %v (%.1f MiB/s)",
		floodBytes>>20, idleFlood, float64(floodBytes>>20)/idleFlood.Seconds(), busyFlood, float64(floodBytes>>20)/busyFlood.Seconds())
	t.Logf("viewers: %d joins, %d refused; the stalled viewer dropped %v after it stopped reading", joins.Load(), refused.Load(), dropped)
	if joins.Load() < nviewers {
		t.Fatalf("only %d viewers joined", joins.Load())
	}
	if refused.Load() > 0 {
		t.Errorf("%d viewers were refused; the first: %v", refused.Load(), firstRefusal.Load())
	}
	var now Proc
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("fds: base %d, now %d; new: %v", base.FDs, now.FDs, newFDs(baseFDs, fdTargets(s.PID)))
		}
	})
	waitFor(t, 60*time.Second, "the server's descriptors back at their baseline", func() bool {
		now = s.Proc()
		return now.FDs <= base.FDs+2
	})
	t.Logf("server: fds %d → %d, threads %d → %d, RSS %d → %d KiB (peak %d KiB)", base.FDs, now.FDs, base.Threads, now.Threads, base.RSSKiB, now.RSSKiB, now.HWMKiB)
	// The agent's sends still work, and the stalled viewer's session.
	pings(1)
}

// churnOnce joins session id's live view from src (as the operator, or
// with the share link), reads a few messages, and leaves. It reports
// whether the view opened.
func churnOnce(parent context.Context, src *Server, id, token string, cookie *http.Cookie, operator bool) error {
	ctx, cancel := context.WithTimeout(parent, 30*time.Second)
	defer cancel()
	o := DialOptions{}
	hello := map[string]any{"t": "hello", "since": 0}
	if operator {
		o.Cookie = cookie
	} else {
		hello["token"] = token
	}
	conn, _, err := src.Dial(ctx, "/api/watch/"+id, o)
	if err != nil {
		return fmt.Errorf("dial: %w", err)
	}
	defer conn.CloseNow()
	if err := WriteJSON(ctx, conn, hello); err != nil {
		return fmt.Errorf("hello: %w", err)
	}
	// The messages are looked at, not decoded: 200 viewers decoding
	// pictures would cost this process more than the server.
	for i := range 4 {
		_, b, err := conn.Read(ctx)
		if err != nil {
			if i == 0 {
				return fmt.Errorf("before the server's hello: %w", err)
			}
			return nil // opened; the server may drop a viewer later
		}
		// The server's hello (or its refusal) is the first message: a
		// small JSON object, keys in order.
		if i == 0 && !bytes.Contains(b, []byte(`"t":"hello"`)) {
			return fmt.Errorf("refused: %.200s", b)
		}
	}
	_ = conn.Close(1000, "bye")
	return nil
}

// stalled is a viewer that said hello and never reads: a raw socket with
// a small receive buffer.
type stalled struct {
	conn  net.Conn
	port  int // its local port
	srv   *Server
	since time.Time
	// gone is closed when the server's end was seen closed, at took
	// after since (polled from the start: the drop may come mid-flood).
	gone chan struct{}
	took time.Duration
}

func stalledViewer(t *testing.T, s *Server, id string, cookie *http.Cookie) *stalled {
	t.Helper()
	r := rawDial(t, s, id, cookie)
	if tc, ok := r.conn.(*net.TCPConn); ok {
		_ = tc.SetReadBuffer(4096)
	}
	if _, err := r.conn.Write(frame(0x81, []byte(`{"t":"hello","since":0}`), false)); err != nil {
		t.Fatal(err)
	}
	v := &stalled{conn: r.conn, port: r.conn.LocalAddr().(*net.TCPAddr).Port, srv: s, since: time.Now(), gone: make(chan struct{})}
	waitFor(t, 10*time.Second, "the stalled viewer's socket in the server's table", func() bool { return v.established() })
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			if !v.established() {
				v.took = time.Since(v.since)
				close(v.gone)
				return
			}
		}
	}()
	t.Cleanup(func() { close(stop); wg.Wait() })
	return v
}

// waitDropped waits until the server's end of the stalled socket is no
// longer established (closed by the server), and returns when that was
// after the viewer stopped reading.
func (v *stalled) waitDropped(t *testing.T, bound time.Duration) time.Duration {
	t.Helper()
	select {
	case <-v.gone:
		return v.took
	case <-time.After(bound):
		t.Fatalf("the server did not drop the viewer that never reads within %v: %s", bound, v.line())
		return 0
	}
}

// established reports whether the server's socket to the stalled
// viewer's port is still ESTABLISHED (/proc/PID/net/tcp).
func (v *stalled) established() bool {
	f := strings.Fields(v.line())
	return len(f) > 3 && f[3] == "01"
}

// line is the server's socket to the stalled viewer in
// /proc/PID/net/tcp ("" when it is gone).
func (v *stalled) line() string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(v.srv.PID) + "/net/tcp")
	if err != nil {
		return ""
	}
	_, sport, _ := strings.Cut(v.srv.Addr, ":")
	sp, _ := strconv.Atoi(sport)
	want := fmt.Sprintf(":%04X", sp)
	peer := fmt.Sprintf(":%04X", v.port)
	for _, line := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 4 {
			continue
		}
		if strings.HasSuffix(f[1], want) && strings.HasSuffix(f[2], peer) {
			return line
		}
	}
	return ""
}

// fdTargets is what each of pid's descriptors is open on.
func fdTargets(pid int) map[string]string {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	es, _ := os.ReadDir(dir)
	m := map[string]string{}
	for _, e := range es {
		l, _ := os.Readlink(dir + "/" + e.Name())
		m[e.Name()] = l
	}
	return m
}

func newFDs(base, now map[string]string) []string {
	var out []string
	for fd, l := range now {
		if base[fd] != l {
			out = append(out, fd+"→"+l)
		}
	}
	slices.Sort(out)
	return out
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
