package actors_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/ptyactor/ptyactor/backend/faulty"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// The runtime applies the label rule (messages.CheckLabel) to every
// spawn's name, so the Go API refuses what the tools refuse.
func TestSpawnNameIsALabel(t *testing.T) {
	svc, o := newTestService(t, faulty.New("a"))
	for _, name := range []string{"a\nb", "tab\t", "\x1b[31mred", "rtl\u202e", strings.Repeat("n", messages.MaxLabelChars+1)} {
		_, err := svc.Spawn(testkit.Ctx(t), o, messages.SpawnRequest{Name: name})
		var le *messages.LabelError
		if !errors.Is(err, messages.ErrInvalidArgument) || !errors.As(err, &le) || le.Kind != "terminal name" {
			t.Errorf("name %.20q: %v, want a *messages.LabelError", name, err)
		}
	}
	if _, err := svc.Spawn(testkit.Ctx(t), o, messages.SpawnRequest{Name: strings.Repeat("é", messages.MaxLabelChars)}); err != nil {
		t.Fatalf("a name at the bound: %v", err)
	}
}
