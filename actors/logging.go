package actors

import (
	"context"
	"log/slog"

	"github.com/rs/zerolog"
)

// slogToZerolog routes protoactor's slog output into the injected zerolog
// logger, so the library never writes to stderr on its own. protoactor logs
// routine events (system started, dead letters) at Info; they are lowered to
// Debug because they are the runtime's internals, not the embedder's news.
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
	ev := h.zl.WithLevel(level(r.Level))
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
	ev.Str("lib", "protoactor").Msg(r.Message)
	return nil
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
