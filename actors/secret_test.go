package actors

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/ptyactor/ptyactor/actors/protocol"
	"github.com/ptyactor/ptyactor/messages"
)

// A secret on its way to the terminal is printed as its length only: a
// dead letter is logged with its message.
func TestEnterSecretPrintsNoSecret(t *testing.T) {
	m := &protocol.EnterSecret{Session: "pty-1", Prompt: messages.SecretPrompt{Reader: "sudo"}, Secret: []byte("hunter2")}
	var b strings.Builder
	slog.New(slog.NewTextHandler(&b, nil)).Info("dead letter", "msg", m)
	for _, s := range []string{fmt.Sprint(m), fmt.Sprintf("%v %+v %#v %s", m, m, m, m), b.String()} {
		if strings.Contains(s, "hunter2") || strings.Contains(s, "104 117 110") || !strings.Contains(s, "7 bytes") {
			t.Fatalf("printed %q", s)
		}
	}
}
