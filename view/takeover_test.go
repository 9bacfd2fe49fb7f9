package view

// The operator's take-over over the live view's socket: take, type,
// resize, hand back, and a take-over of an idle session.

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/backend/local"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// Taking over through the socket: an operator's take settles the agent's
// send in flight (after a SIGINT when asked) and refuses the agent's
// sends; the page's input runs; a second page's take makes the first
// one's input stale, never written; a hand back lets the agent send
// again, its result carrying what the person did, and the returned
// page's input is stale; a share link's page cannot take.
func TestTakeOver(t *testing.T) {
	s := serve(t)
	ctx := testkit.Ctx(t)
	c1, err := s.dial(s.srv.URL, true, hello{})
	if err != nil {
		t.Fatal(err)
	}
	r1 := &reader{t: t, c: c1}
	r1.control(messages.AgentHolder, false)
	r1.until("$ ")

	op, err := s.sh.StartSend(ctx, messages.SendRequest{Text: "sleep 30; echo slept-$((6*7))", Submit: true})
	if err != nil {
		t.Fatal(err)
	}
	r1.until("sleep 30")
	r1.write(map[string]any{"t": "take", "interrupt": true})
	m := r1.control(messages.OperatorHolder, true)
	if m["person"] != true || m["since"] == nil || m["idleLeftMs"].(float64) <= 0 || m["epoch"].(float64) < 1 {
		t.Fatalf("control after the take: %v", m)
	}
	rctx, cancel := context.WithTimeout(ctx, time.Second)
	res, err := op.Result(rctx)
	cancel()
	if err != nil || res.Cause != messages.CauseTakenOver {
		t.Fatalf("the send in flight: %+v, %v; want cause %s within a second", res, err, messages.CauseTakenOver)
	}
	if _, err := s.sh.Send(ctx, messages.SendRequest{Text: "echo agent", Submit: true}); !errors.Is(err, messages.ErrControlHeld) {
		t.Fatalf("an agent's send while the operator holds control: %v, want %v", err, messages.ErrControlHeld)
	}
	r1.write(map[string]any{"t": "input", "data": "echo typed-$((6*7))\r"})
	r1.until("typed-42")
	if strings.Contains(r1.screen.String(), "slept-42") {
		t.Fatal("the interrupted command went on")
	}

	// A second page takes over: the first one's input is stale.
	c2, err := s.dial(s.srv.URL, true, hello{})
	if err != nil {
		t.Fatal(err)
	}
	r2 := &reader{t: t, c: c2}
	r2.control(messages.OperatorHolder, false)
	n := len(r1.msgs)
	r2.write(map[string]any{"t": "take"})
	r2.control(messages.OperatorHolder, true)
	r1.write(map[string]any{"t": "input", "data": "echo stale-$((6*7))\r"})
	r1.refused("control_stale")
	if !hasControl(r1.msgs[n:], messages.OperatorHolder, false) { // the badge loop may have told it first
		r1.control(messages.OperatorHolder, false)
	}
	r2.write(map[string]any{"t": "resize", "rows": 30, "cols": 100})
	r2.message("resize 30x100", func(m map[string]any) bool { return m["t"] == "resize" && m["rows"] == 30.0 && m["cols"] == 100.0 })
	r2.write(map[string]any{"t": "input", "data": "echo second-$((6*7))\r"})
	r2.until("second-42")
	if strings.Contains(r2.screen.String(), "stale-") {
		t.Fatalf("a stale page's input was written: %q", r2.screen.String())
	}

	// Hand back: the agent sends again, and hears what happened.
	r2.write(map[string]any{"t": "return"})
	r2.control(messages.AgentHolder, false)
	r2.write(map[string]any{"t": "input", "data": "echo returned-$((6*7))\r"})
	r2.refused("control_stale")
	res, err = s.sh.Send(ctx, messages.SendRequest{Text: "echo agent-$((6*7))", Submit: true})
	if err != nil || !strings.Contains(res.Viewport, "agent-42") {
		t.Fatalf("the agent's send after the hand back: %+v, %v", res, err)
	}
	if h := res.Handback; h == nil || h.Reason != messages.HandbackReturned || len(h.Lines) == 0 {
		t.Fatalf("the agent's first result after the hand back carries %+v; want what the people typed", h)
	}
	if strings.Contains(r2.screen.String(), "returned-") {
		t.Fatal("a returned page's input was written")
	}

	// A share link's page cannot take.
	link, err := s.links.Share(s.owner, s.sh.ID(), "ana", 0)
	if err != nil {
		t.Fatal(err)
	}
	c3, err := s.dial(s.srv.URL, false, hello{Token: link.Token})
	if err != nil {
		t.Fatal(err)
	}
	r3 := &reader{t: t, c: c3}
	if hi, err := r3.next(ctx); err != nil || hi["readOnly"] != true {
		t.Fatalf("a share link's hello: %v, %v", hi, err)
	}
	r3.write(map[string]any{"t": "take"})
	r3.refused("read_only")
	r3.write(map[string]any{"t": "input", "data": "echo shared\r"})
	r3.refused("read_only")
}

// A hold without input ends by itself after Options.ControlIdle: the
// page is told the agent holds control again, and the agent sends.
func TestTakeOverIdle(t *testing.T) {
	s := serveWith(t, local.Options{}, func(o *Options) { o.ControlIdle = time.Second })
	ctx := testkit.Ctx(t)
	c, err := s.dial(s.srv.URL, true, hello{})
	if err != nil {
		t.Fatal(err)
	}
	r := &reader{t: t, c: c}
	r.control(messages.AgentHolder, false)
	r.write(map[string]any{"t": "take"})
	m := r.control(messages.OperatorHolder, true)
	if left := m["idleLeftMs"].(float64); left <= 0 || left > 1000 || m["idleTimeoutMs"] != 1000.0 {
		t.Fatalf("control after the take: %v; want about a second left", m)
	}
	r.control(messages.AgentHolder, false)
	res, err := s.sh.Send(ctx, messages.SendRequest{Text: "echo back-$((6*7))", Submit: true})
	if err != nil || !strings.Contains(res.Viewport, "back-42") {
		t.Fatalf("the agent's send after the idle hand back: %+v, %v", res, err)
	}
	if h := res.Handback; h == nil || h.Reason != messages.HandbackIdle {
		t.Fatalf("the hand back: %+v, want reason %s", h, messages.HandbackIdle)
	}
}
