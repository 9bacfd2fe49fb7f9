package takeover

import (
	"testing"

	"github.com/ptyactor/ptyactor/messages"
	"go.uber.org/goleak"
)

// The take-over writes a person's input and signals off the mailbox, in
// goroutines of its own: none may outlive a test.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Two holds the agent was not told of are one summary: the first's
// start, both people, the newest lines within the bound.
func TestJoinHandbacks(t *testing.T) {
	if got := Join(nil, &messages.Handback{Reason: "idle"}); got.Reason != "idle" {
		t.Fatalf("join onto nothing: %+v", got)
	}
	a := &messages.Handback{People: []string{"ann"}, FromSeq: 3, ExitCodes: []int{1}, Lines: make([]messages.TypedLine, maxHandbackLines)}
	b := &messages.Handback{People: []string{"bob"}, FromSeq: 9, ExitCodes: []int{2}, Lines: []messages.TypedLine{{Text: "last"}}, Reason: "returned"}
	got := Join(a, b)
	switch {
	case len(got.People) != 2 || got.People[0] != "ann" || got.People[1] != "bob":
		t.Fatalf("people %v", got.People)
	case got.FromSeq != 3 || got.Reason != "returned" || len(got.ExitCodes) != 2:
		t.Fatalf("joined %+v", got)
	case len(got.Lines) != maxHandbackLines || got.Lines[len(got.Lines)-1].Text != "last" || !got.Truncated:
		t.Fatalf("lines %d truncated %v", len(got.Lines), got.Truncated)
	}
}
