package messages

import (
	"errors"
	"strings"
	"testing"
)

func TestReadRequestResolve(t *testing.T) {
	p := func(v int) *int { return &v }
	for _, c := range []struct {
		req           ReadRequest
		offset, count int
		bad           string // the refused field; empty: accepted
	}{
		{ReadRequest{}, 0, DefaultReadCount, ""},
		{ReadRequest{Offset: p(7)}, 7, DefaultReadCount, ""},
		{ReadRequest{Count: p(1)}, 0, 1, ""},
		{ReadRequest{Offset: p(MaxSafeInteger), Count: p(MaxSafeInteger)}, MaxSafeInteger, MaxSafeInteger, ""},
		{ReadRequest{Offset: p(-1)}, 0, 0, "offset must be an integer >= 0, got -1"},
		{ReadRequest{Count: p(0)}, 0, 0, "count must be an integer >= 1, got 0"},
		{ReadRequest{Count: p(-5)}, 0, 0, "count must be an integer >= 1, got -5"},
		{ReadRequest{Offset: p(-1), Count: p(0)}, 0, 0, "offset must be"},
	} {
		offset, count, err := c.req.Resolve()
		if c.bad == "" {
			if err != nil || offset != c.offset || count != c.count {
				t.Errorf("%+v: (%d, %d, %v), want (%d, %d, nil)", c.req, offset, count, err, c.offset, c.count)
			}
			continue
		}
		if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), c.bad) {
			t.Errorf("%+v: %v, want an ErrInvalidArgument containing %q", c.req, err, c.bad)
		}
	}
}

func TestParseSignal(t *testing.T) {
	for _, s := range Signals {
		if got, err := ParseSignal(string(s)); got != s || err != nil {
			t.Errorf("ParseSignal(%q) = %q, %v", s, got, err)
		}
	}
	for _, name := range []string{"", "SIGUSR1", "sigint", "SIGINT ", strings.Repeat("X", 1000)} {
		got, err := ParseSignal(name)
		if got != "" || !errors.Is(err, ErrInvalidArgument) || Signal(name).Valid() {
			t.Errorf("ParseSignal(%.20q) = %q, %v; want an ErrInvalidArgument", name, got, err)
			continue
		}
		if msg := err.Error(); !strings.HasPrefix(msg, "signal must be one of [SIGINT SIGTERM SIGKILL SIGTSTP SIGHUP], got ") || len(msg) > 120 {
			t.Errorf("ParseSignal(%.20q): message %q", name, msg)
		}
	}
}
