package bench

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/ptyactor/ptyactor/actors"
	"github.com/ptyactor/ptyactor/messages"
)

// Viewers joining and leaving (issue 35's load case, in one process): N
// viewers each join the flooding session's live view (a picture with
// scrollback, then its stream), read a few messages and leave, in a loop,
// while the session floods and the agent sends to another session. Each
// iteration floods once without viewers and once with them churning; the
// figures are medians over iterations: the flood's speed (MiB/s) and the
// agent's send latency (ms) idle and under churn, and their ratios
// (churn over idle for latency, idle over churn for time: 1 is "holds").

// joinFlood is the flood: 4 MiB in lines of 160 x, then a mark.
const (
	joinFloodBytes = 4 << 20
	joinFloodCmd   = "head -c 4194304 /dev/zero | tr '\\0' x | fold -w 160; echo flood-done"
)

// churnJoin joins url's view, reads four messages (the hello, the
// picture, the badge, the input's holder), and leaves. It reports whether
// it read them.
func churnJoin(ctx context.Context, url string) bool {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	origin := "http://" + strings.Split(strings.TrimPrefix(url, "ws://"), "/")[0]
	c, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{
		HTTPHeader: http.Header{"Origin": {origin}, "Authorization": {"Bearer " + viewToken}}})
	if err != nil {
		return false
	}
	defer c.CloseNow()
	c.SetReadLimit(1 << 24)
	hello, _ := json.Marshal(map[string]any{"t": "hello", "since": 0})
	if c.Write(ctx, websocket.MessageText, hello) != nil {
		return false
	}
	for i := range 4 {
		_, b, err := c.Read(ctx)
		if err != nil {
			return false
		}
		if i == 0 && !strings.Contains(string(b), `"t":"hello"`) {
			return false
		}
	}
	_ = c.Close(websocket.StatusNormalClosure, "bye")
	return true
}

// churn runs n viewers joining and leaving url until stop returns; it
// reports the joins.
func churn(url string, n int) (stop func() int64) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var joins atomic.Int64
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				if churnJoin(ctx, url) {
					joins.Add(1)
				}
			}
		}()
	}
	return func() int64 { cancel(); wg.Wait(); return joins.Load() }
}

// floodAndPing floods sh and, until it is done, sends echoes to ping;
// it returns the flood's time and the sends' latencies.
func floodAndPing(b *testing.B, sh, ping *actors.Session) (time.Duration, []time.Duration) {
	ctx := context.Background()
	done := make(chan struct{})
	var took time.Duration
	go func() {
		defer close(done)
		t0 := time.Now()
		res, err := sh.Send(ctx, messages.SendRequest{Text: joinFloodCmd, Submit: true, Wait: messages.WaitPolicy{Timeout: 2 * time.Minute, NoSilence: true}})
		if err != nil || !strings.Contains(res.Viewport, "flood-done") {
			b.Errorf("flood: %v, %s", err, res.WaitReason)
		}
		took = time.Since(t0)
	}()
	var sends []time.Duration
	for i := 0; ; i++ {
		select {
		case <-done:
			return took, sends
		default:
		}
		t0 := time.Now()
		mark := "ping-" + strconv.Itoa(i)
		res, err := ping.Send(ctx, messages.SendRequest{Text: "echo " + mark, Submit: true})
		if err != nil || !strings.Contains(res.Viewport, mark) {
			b.Fatalf("ping: %v, %q", err, res.Viewport)
		}
		sends = append(sends, time.Since(t0))
	}
}

func viewersJoining(b *testing.B, n int) {
	flooded, ping, url := viewerPair(b)
	var idleFlood, busyFlood, idleSend, busySend []time.Duration
	var joins int64
	var busy time.Duration
	for b.Loop() {
		d, s := floodAndPing(b, flooded, ping)
		idleFlood, idleSend = append(idleFlood, d), append(idleSend, median(s))
		stop := churn(url, n)
		d, s = floodAndPing(b, flooded, ping)
		joins += stop()
		busy += d
		busyFlood, busySend = append(busyFlood, d), append(busySend, median(s))
	}
	if b.Failed() {
		return
	}
	mibs := func(d time.Duration) float64 { return float64(joinFloodBytes>>20) / d.Seconds() }
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(mibs(median(idleFlood)), "idle-MiB/s")
	b.ReportMetric(mibs(median(busyFlood)), "churn-MiB/s")
	b.ReportMetric(float64(median(idleFlood))/float64(median(busyFlood)), "flood-idle/churn-speed")
	b.ReportMetric(ms(median(idleSend)), "idle-send-ms")
	b.ReportMetric(ms(median(busySend)), "churn-send-ms")
	b.ReportMetric(float64(median(busySend))/float64(median(idleSend)), "send-churn/idle")
	b.ReportMetric(float64(joins)/busy.Seconds(), "joins/s")
}

// BenchmarkViewersJoining: 200 viewers joining and leaving the flooding
// session's view in a loop (issue 35's load case); the bar is
// flood-idle/churn-speed and send-churn/idle near 1.
func BenchmarkViewersJoining(b *testing.B) { viewersJoining(b, 200) }
