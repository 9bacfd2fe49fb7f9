package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/tools"
)

// rawStdio is the built binary over stdio, driven line by line.
type rawStdio struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     io.WriteCloser
	lines  chan []byte // stdout, one message a line; closed at EOF
	stderr *syncBuf
	exited chan struct{}
	next   int // the next request id
}

func startRawStdio(t *testing.T) *rawStdio {
	t.Helper()
	cmd := exec.Command(binary(t), fastFlags...)
	cmd.Dir = t.TempDir()
	s := &rawStdio{t: t, cmd: cmd, lines: make(chan []byte, 16), stderr: &syncBuf{}, exited: make(chan struct{}), next: 100}
	cmd.Stderr = s.stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.in = in
	go func() {
		r := bufio.NewReader(out)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				s.lines <- line
			}
			if err != nil {
				close(s.lines)
				return
			}
		}
	}()
	go func() { _ = cmd.Wait(); close(s.exited) }()
	t.Cleanup(func() {
		_ = s.in.Close() // EOF: the server disposes its terminals and exits
		select {
		case <-s.exited:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-s.exited:
			case <-time.After(20 * time.Second):
				_ = cmd.Process.Kill()
				<-s.exited
			}
			t.Errorf("the server did not exit on EOF")
		}
		if t.Failed() {
			t.Logf("server stderr:\n%s", tailString(s.stderr.String(), 4000))
		}
	})
	s.call("initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}`)
	s.write(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return s
}

// rpcReply is a response as it came.
type rpcReply struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Method string `json:"method"`
}

func (s *rawStdio) write(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		s.t.Fatalf("write: %v", err)
	}
}

// reply is the next response, notifications skipped.
func (s *rawStdio) reply() rpcReply {
	s.t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		select {
		case line, ok := <-s.lines:
			if !ok {
				s.t.Fatalf("stdout closed: the server ended the connection")
			}
			var r rpcReply
			if err := json.Unmarshal(line, &r); err != nil {
				s.t.Fatalf("undecodable line %q: %v", line, err)
			}
			if r.Method != "" {
				continue
			}
			return r
		case <-deadline:
			s.t.Fatalf("no reply in 60 s")
		}
	}
}

// call sends a request and returns its result.
func (s *rawStdio) call(method, params string) json.RawMessage {
	s.t.Helper()
	s.next++
	s.write(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, s.next, method, params))
	r := s.reply()
	if string(r.ID) != fmt.Sprint(s.next) || r.Error != nil {
		s.t.Fatalf("%s: reply id %s, error %+v", method, r.ID, r.Error)
	}
	return r.Result
}

// tool calls a tool and returns its text.
func (s *rawStdio) tool(name string, args obj) (string, map[string]any) {
	s.t.Helper()
	a, _ := json.Marshal(obj{"name": name, "arguments": args})
	var res struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		Structured map[string]any `json:"structuredContent"`
		IsError    bool           `json:"isError"`
	}
	if err := json.Unmarshal(s.call("tools/call", string(a)), &res); err != nil || res.IsError || len(res.Content) == 0 {
		s.t.Fatalf("%s: %v %+v", name, err, res)
	}
	return res.Content[0].Text, res.Structured
}

// Each line that is not one JSON-RPC 2.0 message gets a JSON-RPC error
// (with its id when one can be read) and the connection, its terminal and
// the terminal's state stay. EOF then ends the server cleanly.
func TestStdioMalformedLines(t *testing.T) {
	s := startRawStdio(t)
	_, st := s.tool(tools.TerminalOpen, nil)
	id := st["sessionId"].(string)
	s.tool(tools.TerminalSend, obj{"sessionId": id, "text": "KEPT=still-here"})
	for _, c := range []struct {
		what, line string
		code       int
		id         string
	}{
		{"not JSON", `this is not json`, -32700, "null"},
		{"cut short", `{"jsonrpc":"2.0","id":1,"method":"ping"`, -32700, "null"},
		{"NaN", `{"jsonrpc":"2.0","id":2,"method":"ping","params":NaN}`, -32700, "null"},
		{"bare NaN", `NaN`, -32700, "null"},
		{"two values", `{"jsonrpc":"2.0","id":3,"method":"ping"} {}`, -32700, "null"},
		{"batch", `[{"jsonrpc":"2.0","id":4,"method":"ping"}]`, -32600, "null"},
		{"empty batch", `[]`, -32600, "null"},
		{"bare string", `"just a string"`, -32600, "null"},
		{"bare number", `42`, -32600, "null"},
		{"no jsonrpc", `{"id":5,"method":"ping"}`, -32600, "5"},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":6,"method":"ping"}`, -32600, "6"},
		{"jsonrpc a number", `{"jsonrpc":2.0,"id":"s7","method":"ping"}`, -32600, `"s7"`},
		{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, -32600, "null"},
		{"array id", `{"jsonrpc":"2.0","id":[8],"method":"ping"}`, -32600, "null"},
		{"fractional id", `{"jsonrpc":"2.0","id":9.5,"method":"ping"}`, -32600, "null"},
		{"method a number", `{"jsonrpc":"2.0","id":10,"method":5}`, -32600, "10"},
		{"neither request nor response", `{"jsonrpc":"2.0"}`, -32600, "null"},
	} {
		s.write(c.line)
		r := s.reply()
		if r.Error == nil || r.Error.Code != c.code || string(r.ID) != c.id {
			t.Fatalf("%s: want error %d id %s, got id %s error %+v result %s", c.what, c.code, c.id, r.ID, r.Error, r.Result)
		}
		s.call("ping", "{}") // still served
	}
	s.write("") // a blank line is no message: no answer
	s.write(" \r")
	if text, _ := s.tool(tools.TerminalSend, obj{"sessionId": id, "text": `echo "[$KEPT]"`}); !strings.Contains(text, "[still-here]\n") {
		t.Fatalf("terminal state after the malformed lines: %q", text)
	}
	if err := s.in.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.exited:
	case <-time.After(20 * time.Second):
		t.Fatal("the server did not exit on EOF")
	}
	if st := s.cmd.ProcessState; st.ExitCode() != 0 {
		t.Fatalf("exit after EOF: %v", st)
	}
}

// A line over 4 MiB is answered with an error and skipped as it arrives,
// never held whole: a 64 MiB line leaves the server's peak RSS far below
// it, and the next line is served.
func TestStdioOverlongLine(t *testing.T) {
	s := startRawStdio(t)
	_, st := s.tool(tools.TerminalOpen, nil)
	id := st["sessionId"].(string)
	s.tool(tools.TerminalSend, obj{"sessionId": id, "text": "KEPT=after-long"})
	before := vmHWM(t, s.cmd.Process.Pid)
	const size = 64 << 20
	long := bytes.Repeat([]byte("a"), size)
	copy(long, `{"jsonrpc":"2.0","id":77,"method":"ping","params":{"x":"`)
	werr := make(chan error, 1)
	go func() {
		_, err := s.in.Write(long) // the answer comes while this is still written
		if err == nil {
			_, err = io.WriteString(s.in, "\"}}\n")
		}
		werr <- err
	}()
	r := s.reply()
	if r.Error == nil || r.Error.Code != -32600 || string(r.ID) != "77" || !strings.Contains(r.Error.Message, "longer than 4194304 bytes") {
		t.Fatalf("over-long line: id %s error %+v", r.ID, r.Error)
	}
	if err := <-werr; err != nil {
		t.Fatal(err)
	}
	s.call("ping", "{}")
	if text, _ := s.tool(tools.TerminalSend, obj{"sessionId": id, "text": `echo "[$KEPT]"`}); !strings.Contains(text, "[after-long]\n") {
		t.Fatalf("terminal state after the long line: %q", text)
	}
	after := vmHWM(t, s.cmd.Process.Pid)
	t.Logf("peak RSS %d MiB before, %d MiB after a %d MiB line", before>>20, after>>20, size>>20)
	if after-before > 24<<20 {
		t.Fatalf("peak RSS grew by %d MiB for a %d MiB line", (after-before)>>20, size>>20)
	}
	// An id that does not come before the bound cannot be read: null.
	s.write(`{"jsonrpc":"2.0","method":"ping","params":{"x":"` + strings.Repeat("c", maxLineBytes+1<<20) + `"},"id":79}`)
	if r := s.reply(); r.Error == nil || r.Error.Code != -32600 || string(r.ID) != "null" {
		t.Fatalf("over-long line with its id at the end: id %s error %+v", r.ID, r.Error)
	}
	// Just within the bound is served.
	pad := maxLineBytes - len(`{"jsonrpc":"2.0","id":78,"method":"ping","params":{"x":""}}`)
	s.write(`{"jsonrpc":"2.0","id":78,"method":"ping","params":{"x":"` + strings.Repeat("b", pad) + `"}}`)
	if r := s.reply(); r.Error != nil || string(r.ID) != "78" {
		t.Fatalf("a line of exactly %d bytes: id %s error %+v", maxLineBytes, r.ID, r.Error)
	}
}
