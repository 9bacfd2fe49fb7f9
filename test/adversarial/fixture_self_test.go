package adversarial

import (
	"strings"
	"testing"
	"time"
)

// The fixture itself: a server starts on a fresh home, the token holder's
// MCP calls work, the operator logs in and watches a session's output
// over the live view's socket.
func TestFixture(t *testing.T) {
	s := Start(t, Options{})
	c := s.MCP()
	id := c.Open()
	v, err := s.Watch(ctx(t), id, "", DialOptions{Cookie: s.Login()})
	if err != nil {
		t.Fatal(err)
	}
	if v.Hello["readOnly"] != false {
		t.Fatalf("operator's hello: %v", v.Hello)
	}
	text, _ := v.Drain(ctx(t))
	if r := c.Send(id, "echo fixture-$((6*7))"); !strings.Contains(r.Text, "fixture-42") {
		t.Fatalf("send: %q", r.Text)
	}
	waitFor(t, 15*time.Second, "the viewer sees the output", func() bool { return strings.Contains(text(), "fixture-42") })
	if p := s.Proc(); p.RSSKiB == 0 || p.FDs == 0 || p.Threads == 0 {
		t.Fatalf("proc figures %+v", p)
	}
}
