package adversarial

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/ptyactor/ptyactor/tools"
)

// The live view's socket refuses an upgrade from a foreign origin or
// without one (cross-site WebSocket hijacking: a page of evil.example
// opening it with the operator's cookie), and a hello that brings neither
// the operator's login nor a live link for this session: no cookie, a
// wrong link, another session's link.
func TestWatchRefusesStrangers(t *testing.T) {
	s := Start(t, Options{})
	c := s.MCP()
	a, b := c.Open(), c.Open()
	cookie := s.Login()
	tokenB, _ := c.Share(b, map[string]any{"label": "b"})
	for _, o := range []DialOptions{
		{Origin: "http://evil.example", Cookie: cookie},
		{Origin: "null", Cookie: cookie},
		{NoOrigin: true, Cookie: cookie},
	} {
		if _, res, err := s.Dial(ctx(t), "/api/watch/"+a, o); err == nil || res == nil || res.StatusCode != http.StatusForbidden {
			t.Errorf("upgrade with origin %q (none: %v): %v, %v; want 403", o.Origin, o.NoOrigin, err, res)
		}
	}
	for _, tc := range []struct{ what, token string }{
		{"no cookie, no link", ""},
		{"a wrong link", strings.Repeat("A", 22)},
		{"another session's link", tokenB},
	} {
		_, err := s.Watch(ctx(t), a, tc.token, DialOptions{})
		if err == nil || !strings.Contains(err.Error(), "forbidden") {
			t.Errorf("%s: %v; want forbidden", tc.what, err)
		}
	}
	// The link opens its own session only.
	if _, err := s.Watch(ctx(t), b, tokenB, DialOptions{}); err != nil {
		t.Fatalf("the link to b: %v", err)
	}
}

// A share link's socket is read-only: take, input, resize and return
// are refused (read_only), the terminal gets none of the bytes and keeps
// its size, and the agent keeps the input.
func TestLinkSocketCannotControl(t *testing.T) {
	s := Start(t, Options{})
	c := s.MCP()
	id := c.Open()
	token, _ := c.Share(id, map[string]any{"label": "ro"})
	v, err := s.Watch(ctx(t), id, token, DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	before := c.OK(tools.TerminalScreen, map[string]any{"sessionId": id})
	const marker = "typed-through-a-link"
	for _, m := range []map[string]any{
		{"t": "take", "interrupt": true},
		{"t": "input", "data": "echo " + marker + "\r"},
		{"t": "resize", "rows": 7, "cols": 33},
		{"t": "return"},
	} {
		if err := WriteJSON(ctx(t), v.C, m); err != nil {
			t.Fatal(err)
		}
		for {
			got, _, err := ReadMessage(ctx(t), v.C)
			if err != nil {
				t.Fatalf("%v: %v", m, err)
			}
			if got != nil && got["t"] == "refused" {
				if got["code"] != "read_only" {
					t.Fatalf("%v: refused %v", m, got)
				}
				break
			}
			if got != nil && got["t"] == "control" && got["you"] == true {
				t.Fatalf("%v: the link's page got control: %v", m, got)
			}
		}
	}
	after := c.OK(tools.TerminalScreen, map[string]any{"sessionId": id})
	if strings.Contains(after.Text, marker) || strings.Contains(c.OK(tools.TerminalRead, map[string]any{"sessionId": id}).Text, marker) {
		t.Fatal("the link's input reached the terminal")
	}
	if fmt.Sprint(before.S["rows"], before.S["cols"]) != fmt.Sprint(after.S["rows"], after.S["cols"]) {
		t.Fatalf("the link resized the terminal: %v×%v → %v×%v", before.S["rows"], before.S["cols"], after.S["rows"], after.S["cols"])
	}
	if r := c.Send(id, "echo agent-$((5+5))"); !strings.Contains(r.Text, "agent-10") {
		t.Fatalf("the agent's send after the link's tries: %q", r.Text)
	}
}

// rawSocket is a WebSocket spoken by hand, to send frames no library
// sends.
type rawSocket struct {
	conn net.Conn
	rd   *bufio.Reader
}

// rawDial upgrades /api/watch/id by hand as the operator (cookie).
func rawDial(t *testing.T, s *Server, id string, cookie *http.Cookie) *rawSocket {
	t.Helper()
	conn, err := net.DialTimeout("tcp", s.Addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	req := "GET /api/watch/" + id + " HTTP/1.1\r\nHost: " + s.Host() + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nOrigin: " + s.Origin() + "\r\n" +
		"Cookie: " + CookieHeader(cookie) + "\r\n\r\n"
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	r := &rawSocket{conn: conn, rd: bufio.NewReader(conn)}
	_ = conn.SetReadDeadline(time.Now().Add(closeBound))
	res, err := http.ReadResponse(r.rd, nil)
	if err != nil || res.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("raw upgrade: %v %v", res, err)
	}
	return r
}

// frame is one WebSocket frame: b0 is FIN, RSV and opcode; the payload
// is masked unless unmasked.
func frame(b0 byte, payload []byte, unmasked bool) []byte {
	out := []byte{b0}
	maskBit := byte(0x80)
	if unmasked {
		maskBit = 0
	}
	switch n := len(payload); {
	case n < 126:
		out = append(out, maskBit|byte(n))
	case n < 1<<16:
		out = append(out, maskBit|126, byte(n>>8), byte(n))
	default:
		out = append(out, maskBit|127)
		out = binary.BigEndian.AppendUint64(out, uint64(n))
	}
	if unmasked {
		return append(out, payload...)
	}
	var key [4]byte
	_, _ = rand.Read(key[:])
	out = append(out, key[:]...)
	for i, b := range payload {
		out = append(out, b^key[i%4])
	}
	return out
}

// closeFrame reads the server's frames until its close, and returns the
// close's code and reason.
func (r *rawSocket) closeFrame(t *testing.T) (int, string) {
	t.Helper()
	_ = r.conn.SetReadDeadline(time.Now().Add(closeBound))
	for {
		var h [2]byte
		if _, err := io.ReadFull(r.rd, h[:]); err != nil {
			return -1, "no close frame: " + err.Error()
		}
		n := uint64(h[1] & 0x7f)
		switch n {
		case 126:
			var b [2]byte
			_, _ = io.ReadFull(r.rd, b[:])
			n = uint64(binary.BigEndian.Uint16(b[:]))
		case 127:
			var b [8]byte
			_, _ = io.ReadFull(r.rd, b[:])
			n = binary.BigEndian.Uint64(b[:])
		}
		p := make([]byte, n)
		if _, err := io.ReadFull(r.rd, p); err != nil {
			return -1, "no close frame: " + err.Error()
		}
		if h[0]&0x0f == 0x8 {
			if len(p) < 2 {
				return 1005, ""
			}
			return int(binary.BigEndian.Uint16(p)), string(p[2:])
		}
	}
}

// Frames no page sends, spoken by hand after a valid hello: unmasked,
// an unknown opcode, reserved bits, an oversized or fragmented control
// frame, a continuation with nothing to continue. Each closes the socket
// with a protocol error (1002) and a reason; the server goes on. An
// unmasked frame ends the connection at once, without a close frame
// (RFC 6455 5.1: the server MUST close, MAY send a close; the WebSocket
// library closes).
func TestMalformedFramesClosed(t *testing.T) {
	s := Start(t, Options{})
	c := s.MCP()
	id := c.Open()
	cookie := s.Login()
	hello := []byte(`{"t":"hello","since":0}`)
	for _, tc := range []struct {
		what  string
		frame []byte
	}{
		{"an unmasked frame", frame(0x81, []byte(`{"t":"take"}`), true)},
		{"opcode 3 (reserved)", frame(0x83, []byte("x"), false)},
		{"RSV1 without an extension", frame(0xC1, []byte(`{"t":"take"}`), false)},
		{"a ping of 126 bytes", frame(0x89, make([]byte, 126), false)},
		{"a fragmented ping", frame(0x09, []byte("x"), false)},
		{"a continuation of nothing", frame(0x80, []byte("x"), false)},
	} {
		r := rawDial(t, s, id, cookie)
		if _, err := r.conn.Write(append(frame(0x81, hello, false), tc.frame...)); err != nil {
			t.Fatal(err)
		}
		code, reason := r.closeFrame(t)
		if strings.HasPrefix(tc.what, "an unmasked") {
			if code != -1 || !strings.HasSuffix(reason, "EOF") {
				t.Errorf("%s: %d %q; want the connection ended", tc.what, code, reason)
			}
			continue
		}
		if code != int(websocket.StatusProtocolError) || reason == "" {
			t.Errorf("%s: close %d %q; want 1002 with a reason", tc.what, code, reason)
		}
		t.Logf("%s: close %d %q", tc.what, code, reason)
	}
	// A text message that is not JSON is answered (not final: a page's
	// bug must not cost the view), and the socket goes on.
	v, err := s.Watch(ctx(t), id, "", DialOptions{Cookie: cookie})
	if err != nil {
		t.Fatal(err)
	}
	if err := v.C.Write(ctx(t), websocket.MessageText, []byte("{not json")); err != nil {
		t.Fatal(err)
	}
	for {
		m, _, err := ReadMessage(ctx(t), v.C)
		if err != nil {
			t.Fatalf("after a message that is not JSON: %v", err)
		}
		if m != nil && m["t"] == "refused" && m["code"] == "bad_message" {
			break
		}
	}
	if r := c.Send(id, "echo alive-$((4+4))"); !strings.Contains(r.Text, "alive-8") {
		t.Fatalf("the agent's send after the malformed frames: %q", r.Text)
	}
}

// A 16 MiB message (one frame, or streamed in fragments) closes the
// socket (1009, message too big) once past the page's bound of 4 MiB,
// and the server's memory grows by far less than what was sent: four
// sockets at once send 64 MiB.
func TestHugeMessageClosed(t *testing.T) {
	s := Start(t, Options{})
	c := s.MCP()
	id := c.Open()
	cookie := s.Login()
	big := make([]byte, 16<<20)
	for i := range big {
		big[i] = 'a'
	}
	before := s.Proc()
	var wg sync.WaitGroup
	for i := range 4 {
		v, err := s.Watch(ctx(t), id, "", DialOptions{Cookie: cookie})
		if err != nil {
			t.Fatal(err)
		}
		_, done := v.Drain(ctx(t))
		wg.Add(1)
		go func() {
			defer wg.Done()
			wctx, cancel := context.WithTimeout(ctx(t), closeBound)
			defer cancel()
			if i%2 == 0 {
				_ = v.C.Write(wctx, websocket.MessageText, big) // one frame
			} else if w, err := v.C.Writer(wctx, websocket.MessageText); err == nil { // fragments
				_, _ = w.Write(big)
				_ = w.Close()
			}
			select {
			case err := <-done:
				if code, reason := CloseOf(err); code != websocket.StatusMessageTooBig {
					t.Errorf("socket %d after 16 MiB: %v (close %d %q); want 1009", i, err, code, reason)
				}
			case <-time.After(closeBound):
				t.Errorf("socket %d still open %v after 16 MiB", i, closeBound)
			}
		}()
	}
	wg.Wait()
	after := s.Proc()
	grew := after.HWMKiB - before.HWMKiB
	t.Logf("4 × 16 MiB messages: server peak RSS %d → %d KiB (+%d KiB)", before.HWMKiB, after.HWMKiB, grew)
	if grew > 16<<10 {
		t.Fatalf("the server's peak RSS grew by %d KiB for 64 MiB refused", grew)
	}
	if r := c.Send(id, "echo alive-$((4+4))"); !strings.Contains(r.Text, "alive-8") {
		t.Fatalf("the agent's send after the huge messages: %q", r.Text)
	}
}

// Thousands of messages a second (a link's page asking to take control
// in a loop; an operator's page sending junk) close the socket with a
// reason (1008, too many messages) after a burst no person reaches, and
// cost bounded memory.
func TestMessageFloodClosed(t *testing.T) {
	s := Start(t, Options{})
	c := s.MCP()
	id := c.Open()
	cookie := s.Login()
	token, _ := c.Share(id, map[string]any{"label": "flood"})
	before := s.Proc()
	for _, tc := range []struct {
		what, token string
		msg         string
	}{
		{"a link's take", token, `{"t":"take"}`},
		{"an operator's junk", "", `{"t":"nonsense"}`},
	} {
		v, err := s.Watch(ctx(t), id, tc.token, DialOptions{Cookie: cookie})
		if err != nil {
			t.Fatal(err)
		}
		_, done := v.Drain(ctx(t))
		start, sent := time.Now(), 0
		var ended error
	send:
		for ; sent < 20000; sent++ {
			if err := v.C.Write(ctx(t), websocket.MessageText, []byte(tc.msg)); err != nil {
				break
			}
			select {
			case ended = <-done:
				break send
			default:
			}
		}
		if ended == nil {
			select {
			case ended = <-done:
			case <-time.After(closeBound):
				t.Fatalf("%s: %d messages in %v, the socket still open", tc.what, sent, time.Since(start))
			}
		}
		code, reason := CloseOf(ended)
		t.Logf("%s: closed after %d messages in %v: %d %q", tc.what, sent, time.Since(start), code, reason)
		if code != websocket.StatusPolicyViolation || !strings.Contains(reason, "too many messages") {
			t.Fatalf("%s: the flood ended with %v (close %d %q); want 1008 too many messages", tc.what, ended, code, reason)
		}
	}
	after := s.Proc()
	t.Logf("floods: server peak RSS %d → %d KiB", before.HWMKiB, after.HWMKiB)
	if grew := after.HWMKiB - before.HWMKiB; grew > 32<<10 {
		t.Fatalf("the server's peak RSS grew by %d KiB for two floods", grew)
	}
}
