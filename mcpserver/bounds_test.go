package mcpserver

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/test/testkit"
	"github.com/ptyactor/ptyactor/tools"
)

// oversized are the amplification requests of the security review,
// scaled: at 1, the review's sizes (a 3.5 MB pattern, 2,000,000 keys,
// 1,000,000 unknown parameters, a 15 MB text), each refused before the
// server decodes it whole; smaller scales stay beyond every bound.
func oversized(id string, scale float64) []struct {
	what, tool string
	args       json.RawMessage
} {
	n := func(v int) int { return int(float64(v) * scale) }
	keys := make([]string, n(2_000_000))
	for i := range keys {
		keys[i] = "C-@" // 12 MB of JSON: within the transports' 16 MiB
	}
	k, _ := json.Marshal(obj{"sessionId": id, "text": "", "submit": false, "keys": keys, "timeoutMs": 2000})
	var b strings.Builder
	b.WriteString(`{"sessionId":"` + id + `"`)
	for i := range n(1_000_000) {
		b.WriteString(`,"p` + strconv.Itoa(i) + `":0`)
	}
	b.WriteString("}")
	p, _ := json.Marshal(obj{"sessionId": id, "pattern": strings.Repeat("x", n(3_500_000)), "timeoutMs": 100})
	text := max(n(15_000_000), 2_100_000) // beyond the arguments' bound
	t, _ := json.Marshal(obj{"sessionId": id, "text": strings.Repeat("y", text)})
	return []struct {
		what, tool string
		args       json.RawMessage
	}{
		{fmt.Sprintf("%d-byte terminal_wait pattern", n(3_500_000)), tools.TerminalWait, p},
		{fmt.Sprintf("%d keys", len(keys)), tools.TerminalSend, k},
		{fmt.Sprintf("%d unknown parameters", n(1_000_000)), tools.TerminalSend, json.RawMessage(b.String())},
		{fmt.Sprintf("%d-byte text", text), tools.TerminalSend, t},
	}
}

// Every oversized request is refused with a typed argument error through
// the MCP server, and the terminal keeps serving.
func TestOversizedRequestsRefused(t *testing.T) {
	p := newInproc(t, tools.Options{})
	c := p.client()
	id := c.open(nil)
	// A hundredth of the review's sizes is beyond every bound (a 35,000-
	// character pattern, 20,000 keys, 10,000 parameters); the text is
	// 2.1 MB, beyond the arguments' bound.
	for _, r := range oversized(id, 0.01) {
		start := time.Now()
		res := c.call(r.tool, r.args)
		if !res.IsError || !strings.Contains(res.Text, "the limit is") {
			t.Errorf("%s: isError=%v %.200q", r.what, res.IsError, res.Text)
		}
		t.Logf("%s: refused in %v: %.160s", r.what, time.Since(start).Round(time.Millisecond), res.Text)
	}
	if r := c.send(id, "echo still-serving"); !strings.Contains(r.Text, "still-serving\n") {
		t.Fatalf("after oversized calls: %q", r.Text)
	}
}

// TestOversizedRequestsMemory measures what each oversized request costs
// the process (client, in-memory transport and server): the bytes
// allocated during the call and the sampled peak of the live heap above
// the idle heap. It only reports; run it with PTYMCP_MEASURE=1.
func TestOversizedRequestsMemory(t *testing.T) {
	if os.Getenv("PTYMCP_MEASURE") == "" {
		t.Skip("set PTYMCP_MEASURE=1 to measure")
	}
	p := newInproc(t, tools.Options{})
	c := p.client()
	id := c.open(nil)
	for _, r := range oversized(id, 1) {
		runtime.GC()
		debug.FreeOSMemory()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		var (
			mu   sync.Mutex
			peak uint64
			stop = make(chan struct{})
			wg   sync.WaitGroup
		)
		wg.Go(func() {
			tk := time.NewTicker(time.Millisecond)
			defer tk.Stop()
			for {
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				mu.Lock()
				peak = max(peak, m.HeapInuse)
				mu.Unlock()
				select {
				case <-stop:
					return
				case <-tk.C:
				}
			}
		})
		res, err := c.callErr(r.tool, r.args)
		close(stop)
		wg.Wait()
		if err != nil {
			t.Fatalf("%s: %v", r.what, err)
		}
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		mib := func(b uint64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
		t.Logf("%-30s request %s: allocated %s, peak heap in use +%s; isError=%v %.100q",
			r.what, mib(uint64(len(r.args))), mib(after.TotalAlloc-before.TotalAlloc), mib(peak-min(peak, before.HeapInuse)), res.IsError, res.Text)
	}
}

// A terminal's name is a label (messages.CheckLabel) over MCP too: the
// schema says so, a forged or oversized name is refused, and the list
// keeps one line per terminal.
func TestOpenNameLabelRule(t *testing.T) {
	p := newInproc(t, tools.Options{})
	c := p.client()
	res, err := c.cs.ListTools(testkit.Ctx(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range res.Tools {
		if tl.Name == tools.TerminalOpen {
			if in, _ := json.Marshal(tl.InputSchema); !strings.Contains(string(in), `"maxLength":128`) {
				t.Errorf("terminal_open schema has no name bound: %s", in)
			}
		}
	}
	c.fails(tools.TerminalOpen, obj{"name": "dev\npty-0000 (root) [shell] running pid=1"}, "terminal name must not contain control or format characters (U+000A at character 4)")
	c.fails(tools.TerminalOpen, obj{"name": strings.Repeat("n", 300_000)}, "name is over 50000 characters; the limit is 128")
	c.fails(tools.TerminalOpen, obj{"name": strings.Repeat("n", 129)}, "terminal name must be at most 128 characters, got 129")
	a := c.open(obj{"name": "first"})
	b := c.open(obj{"name": strings.Repeat("é", 128)})
	r := c.ok(tools.TerminalList, nil)
	if lines := strings.Split(r.Text, "\n"); len(lines) != 2 || !strings.HasPrefix(lines[0], a+" (first)") && !strings.HasPrefix(lines[1], a+" (first)") || !strings.Contains(r.Text, b+" (") {
		t.Fatalf("list: %q", r.Text)
	}
}
