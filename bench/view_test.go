package bench

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/ptyactor/ptyactor/actors"
	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/backend/local"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
	"github.com/ptyactor/ptyactor/view"
)

// People watching: viewers on the real view server (WebSocket clients
// reading as a page does) on one session, and a session without viewers,
// in the same service, floods alternated in one loop. watched/unwatched-
// speed is the watched session's throughput over the other's (the bar: at
// least 0.95); lag is how long after a flood's result a viewer had drawn
// its last byte (p50, p99 over every viewer and flood).

const viewToken = "bench-operator-token-0123456789abcdef"

// viewerPair spawns a watched and an unwatched session behind a view
// server.
func viewerPair(b *testing.B) (watched, alone *actors.Session, url string) {
	b.Helper()
	svc := testkit.Service(b, testkit.ServiceOptions{Config: messages.DefaultConfig(), Backends: []backend.Backend{local.New(local.Options{})}})
	o := testkit.Owner(b, svc, "bench")
	ctx := context.Background()
	var err error
	if watched, err = svc.Spawn(ctx, o, messages.SpawnRequest{}); err != nil {
		b.Fatal(err)
	}
	if alone, err = svc.Spawn(ctx, o, messages.SpawnRequest{}); err != nil {
		b.Fatal(err)
	}
	v, err := view.New(view.Options{Source: view.ServiceSource(svc), OperatorToken: viewToken})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(v)
	b.Cleanup(srv.Close)
	return watched, alone, "ws" + strings.TrimPrefix(srv.URL, "http") + "/api/watch/" + string(watched.ID())
}

// benchViewer is one page: it reads every message and keeps the newest
// event number it drew, or (stalled) reads nothing at all.
type benchViewer struct {
	c    *websocket.Conn
	seq  atomic.Uint64
	done chan struct{}
	err  error
}

func dialViewer(b *testing.B, url string, stalled bool) *benchViewer {
	b.Helper()
	origin := "http://" + strings.Split(strings.TrimPrefix(url, "ws://"), "/")[0]
	c, _, err := websocket.Dial(context.Background(), url, &websocket.DialOptions{
		HTTPHeader: http.Header{"Origin": {origin}, "Authorization": {"Bearer " + viewToken}}})
	if err != nil {
		b.Fatal(err)
	}
	c.SetReadLimit(1 << 24)
	hello, _ := json.Marshal(map[string]any{"t": "hello", "since": 0})
	if err := c.Write(context.Background(), websocket.MessageText, hello); err != nil {
		b.Fatal(err)
	}
	v := &benchViewer{c: c, done: make(chan struct{})}
	b.Cleanup(func() { c.CloseNow(); <-v.done })
	if stalled {
		close(v.done)
		return v
	}
	go func() {
		defer close(v.done)
		for {
			typ, p, err := c.Read(context.Background())
			if err != nil {
				v.err = err
				return
			}
			switch {
			case typ == websocket.MessageBinary:
				v.seq.Store(binary.BigEndian.Uint64(p[:8]))
			default:
				var m struct {
					T   string `json:"t"`
					Seq uint64 `json:"seq"`
				}
				if json.Unmarshal(p, &m) == nil && (m.T == "picture" || m.T == "resize") {
					v.seq.Store(m.Seq)
				}
			}
		}
	}()
	return v
}

// viewerFlood floods both sessions in turn with viewers on the watched
// one, and reports the ratio and the viewers' lag.
func viewerFlood(b *testing.B, viewers, stalled int) {
	const n = 300000
	cmd := fmt.Sprintf("seq 1 %d", n)
	watched, alone, url := viewerPair(b)
	var vs []*benchViewer
	for i := range viewers + stalled {
		vs = append(vs, dialViewer(b, url, i >= viewers))
	}
	ctx := context.Background()
	var tOn, tOff, lags []time.Duration
	flood := func(sh *actors.Session) (time.Duration, uint64) {
		t0 := time.Now()
		res, err := sh.Send(ctx, messages.SendRequest{Text: cmd, Submit: true})
		if err != nil || !strings.Contains(res.Viewport, strconv.Itoa(n)) {
			b.Fatalf("flood: %v, %s", err, res.WaitReason)
		}
		return time.Since(t0), res.Seq
	}
	for b.Loop() {
		d, _ := flood(alone)
		tOff = append(tOff, d)
		d, seq := flood(watched)
		tOn = append(tOn, d)
		end := time.Now()
		var wg sync.WaitGroup
		var mu sync.Mutex
		for _, v := range vs[:viewers] {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// The viewer's newest number reaches the settle's once it
				// drew the flood's last output (the settle draws nothing:
				// it is enough to pass the output before it).
				for v.seq.Load()+8 < seq {
					select {
					case <-v.done:
						return
					case <-time.After(time.Millisecond):
					}
				}
				mu.Lock()
				lags = append(lags, time.Since(end))
				mu.Unlock()
			}()
		}
		wg.Wait()
	}
	dropped := 0
	for _, v := range vs[:viewers] {
		select {
		case <-v.done:
			dropped++
		default:
		}
	}
	reportRecorded(b, tOn, tOff)
	slices.Sort(lags)
	if len(lags) > 0 {
		b.ReportMetric(float64(lags[len(lags)/2].Microseconds())/1000, "lag-p50-ms")
		b.ReportMetric(float64(lags[len(lags)*99/100].Microseconds())/1000, "lag-p99-ms")
	}
	b.ReportMetric(float64(dropped), "viewers-dropped")
}

// BenchmarkViewersFloodPaired: 20 viewers on one session under a flood
// (on/off-speed: watched over unwatched; bar ≥ 0.95, no viewer dropped,
// lag p99 target ≤ 50 ms).
func BenchmarkViewersFloodPaired(b *testing.B) { viewerFlood(b, 20, 0) }

// BenchmarkStalledViewerPaired: one viewer that never reads and five that
// do: the stalled one is dropped, and neither the flood nor the others
// slow (bar ≥ 0.95).
func BenchmarkStalledViewerPaired(b *testing.B) { viewerFlood(b, 5, 1) }
