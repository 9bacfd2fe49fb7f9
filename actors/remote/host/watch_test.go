package host_test

import (
	"context"
	"errors"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/actors"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/record"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// watched follows w until done says the output so far is complete,
// checking that the events come in order, each once (every number after
// the previous); it returns them.
func watched(t *testing.T, ctx context.Context, w *actors.Watch, after uint64, done func(out string) bool) []record.Event {
	t.Helper()
	var evs []record.Event
	var out strings.Builder
	last := after
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	for !done(out.String()) {
		f, err := w.Next(ctx)
		if err != nil {
			t.Fatalf("watch after %d: %v; output so far:\n%q", last, err, out.String())
		}
		if f.Picture != nil {
			t.Fatalf("a picture (gap %v) in the middle of the watch, after %d", f.Gap, last)
		}
		for _, ev := range f.Events {
			if ev.Seq != last+1 {
				t.Fatalf("event %d after %d: lost or doubled", ev.Seq, last)
			}
			last = ev.Seq
			evs = append(evs, ev)
			if ev.Kind == record.KindOutput {
				out.WriteString(ev.Data)
			}
		}
	}
	return evs
}

func outputOf(evs []record.Event) string {
	var b strings.Builder
	for _, ev := range evs {
		if ev.Kind == record.KindOutput {
			b.WriteString(ev.Data)
		}
	}
	return b.String()
}

var numberLine = regexp.MustCompile(`(?m)^(\d+)\r?$`)

// A person watches a session on a host as one on this machine: a
// picture, then every event after it, in order, none lost or twice (what
// `seq 1 2000` prints, every number once, in order); a viewer that
// resumes after a given event gets exactly the events after it; the
// session's close ends the watch.
func TestRemoteWatch(t *testing.T) {
	if isolate(t) {
		return
	}
	_, _, _, sh := spawnOnHost(t)
	ctx := testkit.Ctx(t)
	if _, err := sh.Send(ctx, messages.SendRequest{Text: "echo before-the-watch", Submit: true}); err != nil {
		t.Fatal(err)
	}
	w, err := sh.Watch(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	f, err := w.Next(ctx)
	if err != nil || f.Picture == nil || f.Gap {
		t.Fatalf("first frame: %+v, %v; want a picture", f, err)
	}
	if !strings.Contains(string(f.Picture.Draw), "before-the-watch") || f.Picture.Rows == 0 || f.Picture.Cols == 0 {
		t.Fatalf("the picture does not show the terminal: %dx%d %q", f.Picture.Rows, f.Picture.Cols, f.Picture.Draw)
	}
	start := f.Picture.Seq
	if _, err := sh.Send(ctx, messages.SendRequest{Text: "seq 1 2000; echo seq-done", Submit: true}); err != nil {
		t.Fatal(err)
	}
	// The line seq-done alone, not the command's echo ("echo seq-done").
	evs := watched(t, ctx, w, start, func(out string) bool { return strings.Contains(out, "\nseq-done\r\n") })
	nums := numberLine.FindAllStringSubmatch(outputOf(evs), -1)
	if len(nums) != 2000 {
		t.Fatalf("%d numbers watched, want 2000", len(nums))
	}
	for i, m := range nums {
		if n, _ := strconv.Atoi(m[1]); n != i+1 {
			t.Fatalf("number %d is %d: lost, doubled or out of order", i+1, n)
		}
	}

	// Resume after an event in the middle: exactly the events after it.
	mid := evs[len(evs)/2].Seq
	w2, err := sh.Watch(ctx, mid)
	if err != nil {
		t.Fatal(err)
	}
	want := evs[len(evs)/2+1:]
	got := watched(t, ctx, w2, mid, func(string) bool { return w2.Seq() >= want[len(want)-1].Seq })
	if len(got) < len(want) {
		t.Fatalf("resumed: %d events, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Seq != want[i].Seq || got[i].Kind != want[i].Kind || got[i].Data != want[i].Data {
			t.Fatalf("resumed event %d: %+v, want %+v", i, got[i], want[i])
		}
	}

	// A second viewer from a picture shares the stream: the same events.
	w3, err := sh.Watch(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	f3, err := w3.Next(ctx)
	if err != nil || f3.Picture == nil {
		t.Fatalf("second viewer's picture: %+v, %v", f3, err)
	}
	// The picture, and the events after it the mirror holds, show it all.
	if !strings.Contains(string(f3.Picture.Draw), "\nseq-done") {
		watched(t, ctx, w3, f3.Picture.Seq, func(out string) bool { return strings.Contains(out, "\nseq-done\r\n") })
	}
	if _, err := sh.Send(ctx, messages.SendRequest{Text: "echo after-all", Submit: true}); err != nil {
		t.Fatal(err)
	}
	more := watched(t, ctx, w, w.Seq(), func(out string) bool { return strings.Contains(out, "after-all\r\n") })
	if !strings.Contains(outputOf(more), "after-all") {
		t.Fatal("the first viewer missed the new output")
	}

	// The close ends every watch, after what came before it.
	if _, err := sh.Close(ctx, "test"); err != nil {
		t.Fatal(err)
	}
	ectx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		_, err := w.Next(ectx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("watch after the close: %v, want io.EOF", err)
		}
	}
}

// The console's badge of a session on a host is the host kernel's:
// waiting (cat reads), at the prompt with the last exit code, secret
// (getpass reads); lost once the host is
// killed, while a watch in progress keeps waiting (its context bounds it)
// instead of ending.
func TestRemoteWatchBadges(t *testing.T) {
	if isolate(t) {
		return
	}
	h, _, _, sh := spawnOnHost(t)
	ctx := testkit.Ctx(t)
	waitBadge := func(want messages.Badge, reader string) {
		t.Helper()
		var a messages.Activity
		testkit.WaitFor(t, 10*time.Second, "badge "+string(want), func() bool {
			snap, err := sh.Describe(ctx)
			if err != nil || snap.Activity == nil {
				return false
			}
			a = *snap.Activity
			return a.Badge == want && (reader == "" || a.Reader == reader)
		})
		if a.Rows == 0 || a.Cols == 0 {
			t.Fatalf("activity %+v: no size", a)
		}
	}
	if _, err := sh.Send(ctx, messages.SendRequest{Text: "cat", Submit: true}); err != nil {
		t.Fatal(err)
	}
	waitBadge(messages.BadgeWaiting, "cat")
	if res, err := sh.Send(ctx, messages.SendRequest{Keys: []string{"Ctrl-C"}}); err != nil || res.Cause != messages.CausePrompt {
		t.Fatalf("^C: %+v, %v", res, err)
	}
	// At the prompt, with the interrupted cat's code, across the wire.
	waitBadge(messages.BadgePrompt, "bash")
	if snap, err := sh.Describe(ctx); err != nil || snap.Activity == nil || snap.Activity.ExitCode == nil || *snap.Activity.ExitCode != 130 {
		t.Fatalf("at the prompt after ^C: %+v, %v; want exit code 130", snap.Activity, err)
	}
	if _, err := sh.Send(ctx, messages.SendRequest{Text: `python3 -c "import getpass; getpass.getpass('pw: ')"`, Submit: true}); err != nil {
		t.Fatal(err)
	}
	waitBadge(messages.BadgeSecret, "python3")

	w, err := sh.Watch(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if f, err := w.Next(ctx); err != nil || f.Picture == nil || !strings.Contains(string(f.Picture.Draw), "pw: ") {
		t.Fatalf("picture: %+v, %v", f, err)
	}
	h.Kill(t)
	waitBadge(messages.BadgeLost, "")
	wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	for {
		// What the mirror held is handed out; then the watch waits.
		f, err := w.Next(wctx)
		if err == nil && f.Picture == nil {
			continue
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("watch with the host lost: %+v, %v; want to wait until its context ends", f, err)
		}
		break
	}
}
