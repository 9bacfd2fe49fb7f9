package adversarial

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/coder/websocket"
)

// The live view's WebSocket as a page (or an attacker) opens it.

// DialOptions say what a WebSocket upgrade carries.
type DialOptions struct {
	// Origin is sent as Origin; "" sends the server's own, NoOrigin none.
	Origin   string
	NoOrigin bool
	// Cookie is sent when not nil.
	Cookie *http.Cookie
	// Host overrides the Host header.
	Host string
}

// Dial opens a WebSocket to path (e.g. /api/watch/<id>). The error is
// the upgrade's (the *http.Response tells a refusal's status).
func (s *Server) Dial(ctx context.Context, path string, o DialOptions) (*websocket.Conn, *http.Response, error) {
	h := http.Header{}
	switch {
	case o.NoOrigin:
	case o.Origin != "":
		h.Set("Origin", o.Origin)
	default:
		h.Set("Origin", s.Origin())
	}
	if o.Cookie != nil {
		h.Set("Cookie", CookieHeader(o.Cookie))
	}
	u := "ws" + strings.TrimPrefix(s.URL(path), "http")
	c, res, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPClient: &http.Client{Transport: s.tr}, HTTPHeader: h, Host: o.Host})
	if res != nil && res.Body != nil {
		_ = res.Body.Close()
	}
	if c != nil {
		// Output frames can be large (a picture of a full screen).
		c.SetReadLimit(64 << 20)
	}
	return c, res, err
}

// Viewer is an open live view socket past its hello.
type Viewer struct {
	C     *websocket.Conn
	Hello map[string]any
}

// Watch opens session id's live view as a page does: the upgrade with
// o, then the hello with the share token (""  for an operator's page),
// and returns once the server answered its hello; the socket is closed
// at the test's end.
func (s *Server) Watch(ctx context.Context, id, token string, o DialOptions) (*Viewer, error) {
	c, _, err := s.Dial(ctx, "/api/watch/"+id, o)
	if err != nil {
		return nil, err
	}
	s.t.Cleanup(func() { _ = c.CloseNow() })
	if err := WriteJSON(ctx, c, map[string]any{"t": "hello", "since": 0, "token": token}); err != nil {
		return nil, err
	}
	for {
		m, _, err := ReadMessage(ctx, c)
		if err != nil {
			return nil, err
		}
		if m == nil {
			continue // output before the hello cannot come, but skip binary
		}
		switch m["t"] {
		case "hello":
			return &Viewer{C: c, Hello: m}, nil
		case "error":
			return nil, fmt.Errorf("watch refused: %v", m)
		}
	}
}

// WriteJSON writes m as one text message.
func WriteJSON(ctx context.Context, c *websocket.Conn, m any) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return c.Write(ctx, websocket.MessageText, b)
}

// ReadMessage reads one message: a text one decoded (m), a binary one as
// its bytes (out; the live view's output, after its 8-byte number).
func ReadMessage(ctx context.Context, c *websocket.Conn) (m map[string]any, out []byte, err error) {
	typ, b, err := c.Read(ctx)
	if err != nil {
		return nil, nil, err
	}
	if typ == websocket.MessageBinary {
		if len(b) < 8 {
			return nil, nil, fmt.Errorf("binary message of %d bytes", len(b))
		}
		return nil, b[8:], nil
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, nil, fmt.Errorf("text message %q: %w", b, err)
	}
	return m, nil, nil
}

// CloseOf is the close status and reason err carries (-1 when err is not
// a close from the peer).
func CloseOf(err error) (websocket.StatusCode, string) {
	var ce websocket.CloseError
	if errors.As(err, &ce) {
		return ce.Code, ce.Reason
	}
	return -1, ""
}

// Drain reads v's messages until its socket ends, collecting the output
// (binary messages and pictures' data) into a buffer the returned func
// reads; done is closed with the socket's error when it ends.
func (v *Viewer) Drain(ctx context.Context) (text func() string, done <-chan error) {
	var mu sync.Mutex
	var buf bytes.Buffer
	d := make(chan error, 1)
	go func() {
		for {
			m, out, err := ReadMessage(ctx, v.C)
			if err != nil {
				d <- err
				return
			}
			mu.Lock()
			buf.Write(out)
			if m != nil && m["t"] == "picture" {
				s, _ := m["data"].(string)
				buf.WriteString(s)
			}
			mu.Unlock()
		}
	}()
	return func() string { mu.Lock(); defer mu.Unlock(); return buf.String() }, d
}
