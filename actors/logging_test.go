package actors

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

// protoactor's "EndpointWriter lost connection" is an error only when the
// connection was not closed on purpose: a cancelled stream (this side's
// shutdown) or the peer's graceful stop reads as info.
func TestCleanCloseIsInfo(t *testing.T) {
	for _, c := range []struct {
		name, msg, err, want string
	}{
		{"this side closing", "EndpointWriter lost connection",
			"rpc error: code = Canceled desc = grpc: the client connection is closing", `"level":"info"`},
		{"the peer's graceful stop", "EndpointWriter lost connection",
			`rpc error: code = Unavailable desc = closing transport due to: connection error: desc = "error reading from server: EOF", received prior goaway: code: NO_ERROR, debug data: "graceful_stop"`, `"level":"info"`},
		{"the peer gone", "EndpointWriter lost connection",
			`rpc error: code = Unavailable desc = error reading from server: read tcp: connection reset by peer`, `"level":"error"`},
		{"another error", "EndpointWriter failed to connect",
			"rpc error: code = Canceled desc = context canceled", `"level":"error"`},
	} {
		var buf bytes.Buffer
		l := slog.New(&slogToZerolog{zl: zerolog.New(&buf)})
		l.ErrorContext(context.Background(), c.msg, slog.String("address", "127.0.0.1:1"), slog.Any("error", errors.New(c.err)))
		if got := buf.String(); !strings.Contains(got, c.want) || !strings.Contains(got, `"address":"127.0.0.1:1"`) {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}
