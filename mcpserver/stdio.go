package mcpserver

// The stdio transport: newline-delimited JSON-RPC on stdin and stdout, as
// the SDK's StdioTransport, except that a line which is not one JSON-RPC
// 2.0 message is answered with a JSON-RPC error and skipped. The SDK's
// transport ends the connection on such a line, and with it the owner:
// every terminal and its state. A line is bounded at maxLineBytes (what
// HTTP bounds a body at) without being buffered whole.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"
)

// maxLineBytes bounds one message on stdin, its newline not counted.
const maxLineBytes = 4 << 20

// stdioTransport is an mcp.Transport over a reader (stdin) and a writer
// (stdout).
type stdioTransport struct {
	in  io.ReadCloser // closed by the connection's Close
	out io.Writer     // never closed
	log zerolog.Logger
}

var _ mcp.Transport = (*stdioTransport)(nil)

// Connect starts the connection's reader.
func (t *stdioTransport) Connect(context.Context) (mcp.Connection, error) {
	c := &lineConn{in: t.in, out: t.out, log: t.log, incoming: make(chan lineItem), closed: make(chan struct{})}
	go c.readLines()
	return c, nil
}

// lineConn is one stdio connection.
type lineConn struct {
	in  io.ReadCloser
	log zerolog.Logger

	writeMu sync.Mutex // Write may be called concurrently
	out     io.Writer

	// incoming carries what the reader found, in order. The reader runs
	// in its own goroutine so that Close unblocks Read, as the SDK's own
	// transport does; like it, the reader stays blocked in a read of
	// stdin that Close cannot interrupt until the process exits.
	incoming chan lineItem

	closeOnce sync.Once
	closed    chan struct{}
	closeErr  error
}

// lineItem is one line's outcome: a message, an error answer to write
// instead, or the end of input (err, io.EOF for a clean end).
type lineItem struct {
	msg   jsonrpc.Message
	reply []byte
	err   error
}

var _ mcp.Connection = (*lineConn)(nil)

// readLines splits the input into lines and decodes each, until the end
// of the input, a read error, or Close.
func (c *lineConn) readLines() {
	r := bufio.NewReaderSize(c.in, 64<<10)
	var line []byte
	skipping := false // the current line went over maxLineBytes
	for {
		chunk, err := r.ReadSlice('\n')
		switch n := len(line) + len(bytes.TrimSuffix(chunk, []byte("\n"))); {
		case skipping:
		case n > maxLineBytes:
			// Answered now, with the id when it comes before the bound
			// (the SDK writes it second), then dropped as it arrives:
			// never held whole.
			id := leadingID(append(line, chunk...))
			skipping, line = true, nil
			c.log.Warn().Int("limit", maxLineBytes).Msg("stdio: message longer than the limit, skipped")
			reply := errorReply(id, jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: the message is longer than %d bytes; it is skipped", maxLineBytes))
			if !c.deliver(lineItem{reply: reply}) {
				return
			}
		default:
			line = append(line, chunk...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if !skipping && len(bytes.TrimSpace(line)) > 0 {
			msg, reply := decodeLine(line, c.log)
			if !c.deliver(lineItem{msg: msg, reply: reply}) {
				return
			}
		}
		if cap(line) > 64<<10 {
			line = nil // a long line's buffer is not kept
		}
		line, skipping = line[:0], false
		if err != nil {
			c.deliver(lineItem{err: err})
			return
		}
	}
}

// deliver hands it to Read; false once the connection is closed.
func (c *lineConn) deliver(it lineItem) bool {
	select {
	case c.incoming <- it:
		return true
	case <-c.closed:
		return false
	}
}

// Read returns the next message. A line that is not one is answered here
// and skipped; the end of the input is io.EOF.
func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		default:
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.closed:
			return nil, io.EOF
		case it := <-c.incoming:
			switch {
			case it.err != nil:
				return nil, it.err
			case it.msg != nil:
				return it.msg, nil
			}
			if err := c.writeLine(it.reply); err != nil {
				return nil, err
			}
		}
	}
}

// Write sends one message on its own line.
func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	default:
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("marshaling message: %w", err)
	}
	return c.writeLine(data)
}

func (c *lineConn) writeLine(data []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err := c.out.Write(append(data, '\n'))
	return err
}

// Close closes the input and unblocks Read; it may be called more than
// once, concurrently.
func (c *lineConn) Close() error {
	c.closeOnce.Do(func() {
		c.closeErr = c.in.Close()
		close(c.closed)
	})
	return c.closeErr
}

// SessionID is empty: stdio has one session.
func (c *lineConn) SessionID() string { return "" }

// decodeLine makes one line into a message, or into the JSON-RPC error
// that answers it: -32700 when it is not JSON, -32600 when it is not one
// JSON-RPC 2.0 message (a batch, a bare value, no or another jsonrpc
// version, an id that is not a string, integer or null). The answer
// carries the line's id when one can be read, else null.
func decodeLine(line []byte, log zerolog.Logger) (jsonrpc.Message, []byte) {
	line = bytes.TrimSpace(line)
	refuse := func(id json.RawMessage, code int64, msg string) (jsonrpc.Message, []byte) {
		log.Warn().Int64("code", code).Str("reason", msg).Msg("stdio: message refused")
		return nil, errorReply(id, code, msg)
	}
	if !json.Valid(line) {
		return refuse(nil, jsonrpc.CodeParseError, "parse error: the line is not one JSON value")
	}
	switch line[0] {
	case '{':
	case '[':
		return refuse(nil, jsonrpc.CodeInvalidRequest, "invalid request: JSON-RPC batches are not supported; send one message per line")
	default:
		return refuse(nil, jsonrpc.CodeInvalidRequest, "invalid request: a message must be a JSON object")
	}
	var env struct {
		Version json.RawMessage `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal(line, &env); err != nil { // a value of the wrong type: none is typed here
		return refuse(nil, jsonrpc.CodeInvalidRequest, "invalid request: "+err.Error())
	}
	id, ok := readID(env.ID)
	if !ok {
		return refuse(nil, jsonrpc.CodeInvalidRequest, "invalid request: id must be a string, an integer or null")
	}
	if string(env.Version) != `"2.0"` {
		return refuse(id, jsonrpc.CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`)
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		return refuse(id, jsonrpc.CodeInvalidRequest, "invalid request: "+err.Error())
	}
	return msg, nil
}

// readID is the id to echo in an answer (nil for none or null), and
// whether it is one JSON-RPC allows: a string, or a number without a
// fraction, in the form the SDK echoes it.
func readID(raw json.RawMessage) (json.RawMessage, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, true
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, false
	}
	switch v := v.(type) {
	case string:
		return raw, true
	case float64:
		if v != math.Trunc(v) || math.Abs(v) > 1<<53 {
			return nil, false
		}
		return json.RawMessage(strconv.FormatInt(int64(v), 10)), true
	}
	return nil, false
}

// leadingID is the id of a message cut short, when its object's members
// up to the id are whole in prefix; else nil.
func leadingID(prefix []byte) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(prefix))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil
		}
		if t == "id" {
			id, _ := readID(v)
			return id
		}
	}
	return nil
}

// errorReply is a JSON-RPC error response; id nil is null.
func errorReply(id json.RawMessage, code int64, msg string) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		Version string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: code, Message: msg}})
	return b
}
