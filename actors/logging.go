package actors

import (
	"context"
	"log/slog"
	"strings"

	"github.com/rs/zerolog"
)

// slogToZerolog routes protoactor's slog output into the injected zerolog
// logger, so the library never writes to stderr on its own. protoactor logs
// routine events (system started, dead letters) at Info; they are lowered to
// Debug because they are the runtime's internals, not the embedder's news.
// A remote peer that closed its connection cleanly is logged by protoactor
// at Error ("EndpointWriter lost connection"); it is news, not a fault, and
// is lowered to Info instead (cleanClose).
type slogToZerolog struct {
	zl    zerolog.Logger
	attrs []slog.Attr
	group string
}

func (h *slogToZerolog) Enabled(_ context.Context, l slog.Level) bool {
	return h.zl.GetLevel() <= level(l)
}

func level(l slog.Level) zerolog.Level {
	switch {
	case l >= slog.LevelError:
		return zerolog.ErrorLevel
	case l >= slog.LevelWarn:
		return zerolog.WarnLevel
	default:
		return zerolog.DebugLevel
	}
}

func (h *slogToZerolog) Handle(_ context.Context, r slog.Record) error {
	lvl, msg := level(r.Level), r.Message
	if lvl == zerolog.ErrorLevel && cleanClose(r) {
		lvl, msg = zerolog.InfoLevel, "remote connection closed cleanly ("+r.Message+")"
	}
	ev := h.zl.WithLevel(lvl)
	if ev == nil {
		return nil
	}
	add := func(a slog.Attr) bool {
		k := a.Key
		if h.group != "" {
			k = h.group + "." + k
		}
		ev = ev.Str(k, a.Value.String())
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(add)
	ev.Str("lib", "protoactor").Msg(msg)
	return nil
}

// cleanClose reports whether r is protoactor's remote endpoint writer
// losing a connection that was closed on purpose: cancelled (this side
// shutting its client connection down: "code = Canceled"), or the peer's
// graceful stop (its GOAWAY with NO_ERROR came first). The gRPC status is
// read from its text: actors links no gRPC package.
func cleanClose(r slog.Record) bool {
	if r.Message != "EndpointWriter lost connection" {
		return false
	}
	clean := false
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "error" {
			e := a.Value.String()
			clean = strings.Contains(e, "code = Canceled") || strings.Contains(e, "received prior goaway: code: NO_ERROR")
			return false
		}
		return true
	})
	return clean
}

func (h *slogToZerolog) WithAttrs(attrs []slog.Attr) slog.Handler {
	n := *h
	n.attrs = append(append([]slog.Attr(nil), h.attrs...), attrs...)
	return &n
}

func (h *slogToZerolog) WithGroup(name string) slog.Handler {
	n := *h
	n.group = name
	return &n
}
