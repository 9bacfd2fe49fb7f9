package view

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/ptyactor/ptyactor/actors"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/record"
)

// The live view's socket. The page speaks first:
//
//	{"t":"hello","since":N,"token":"<share token, or none for an operator>"}
//
// and the server answers with a hello, then frames: a picture (the
// terminal drawn on a fresh one), output, resizes, the session's state,
// and its end. Frames are batched: at most one per frameEvery, each at
// most frameBytes of output. The viewer pulls (actors.Watch): a slow one
// falls behind and takes bigger batches, and one the socket cannot take
// a frame from within writeTimeout is dropped (it may reconnect and
// resume); neither slows the session or the other viewers.
//
// An operator's page may take the session's input over (control.go):
// take, input, resize and return; a share link's page is read-only.
//
// A socket lives no longer than what opened it: a share link's socket is
// closed when the link is revoked or expires, a login cookie's when its
// login ends (logout, expiry), each with a close reason (guard). The page
// speaks JSON text only: a binary message, or more messages than a person
// sends (msgBurst at once, msgRate a second after), closes the socket
// with a reason (readText).
const (
	frameEvery   = 16 * time.Millisecond
	frameBytes   = 32 << 10
	writeTimeout = 5 * time.Second
	helloTimeout = 10 * time.Second
	stateEvery   = time.Second
	msgBurst     = 1000
	msgRate      = 500
	// pingEvery: a viewer must answer a ping within writeTimeout, this
	// often. A viewer that stopped reading while the session went quiet
	// has no frame to fail on: its socket would hold the server's
	// buffered frames for as long as the session stays quiet.
	pingEvery = 10 * time.Second
)

// hello is the page's first message.
type hello struct {
	T     string `json:"t"`
	Since uint64 `json:"since"`
	Token string `json:"token"`
}

func (s *Server) watch(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Origin") == "" {
		s.refuse(w, r, http.StatusForbidden, "a WebSocket without Origin")
		return
	}
	id := messages.SessionID(r.PathValue("id"))
	operator, lg := s.operator(r), (*login)(nil)
	if operator && s.opts.Operator == nil {
		_, lg = s.ops.auth(r)
	}
	// The Origin was checked in ServeHTTP, against the server's own host
	// and Options.Origins.
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		return
	}
	defer c.CloseNow()
	// A page's messages are small but for a paste; a bigger message
	// closes the socket (the page refuses such a paste itself).
	c.SetReadLimit(maxMessage)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	v := &viewer{c: c, srv: s, id: id, readOnly: true, msgs: bucket{at: time.Now()}}
	h, err := v.readHello(ctx)
	if err != nil {
		if !errors.Is(err, errRefusedMessage) {
			c.Close(websocket.StatusPolicyViolation, "hello expected")
		}
		return
	}
	label, guard, ok := s.admit(ctx, v, h, operator, lg)
	if !ok {
		return
	}
	entry, err := s.opts.Source.Describe(ctx, id)
	if err != nil {
		v.send(ctx, map[string]any{"t": "error", "code": "not_found", "message": "no such session"})
		c.Close(websocket.StatusPolicyViolation, "not found")
		return
	}
	watcher, err := s.opts.Source.Watch(ctx, id, h.Since)
	if err != nil {
		v.send(ctx, map[string]any{"t": "error", "code": "not_found", "message": err.Error()})
		c.Close(websocket.StatusPolicyViolation, "not found")
		return
	}
	if v.send(ctx, map[string]any{"t": "hello", "id": id, "name": entry.Name, "label": label, "readOnly": v.readOnly}) != nil {
		return
	}
	v.serve(ctx, cancel, entry, watcher, guard)
}

// admit decides what the socket may do once its hello is read. A share
// link's page (/v/) says so with its token, which must hold whoever opens
// it; an operator's page (/s/) brings none. It returns the link's label and
// the access to keep checking while the socket lives; ok is false once it
// has refused the socket.
func (s *Server) admit(ctx context.Context, v *viewer, h hello, operator bool, lg *login) (label string, guard *access, ok bool) {
	if lg != nil {
		guard = s.loginAccess(lg)
	}
	if operator && h.Token == "" {
		v.readOnly = false
		return "", guard, true
	}
	link, err := s.linkFor(h.Token, v.id)
	if err != nil {
		s.opts.Log.Info().Str("session", string(v.id)).Msg("view: refused: share link not valid")
		v.send(ctx, map[string]any{"t": "error", "code": "forbidden", "message": "this link is not valid (expired, revoked, or for another session)"})
		v.c.Close(websocket.StatusPolicyViolation, "forbidden")
		return "", nil, false
	}
	return link.Label, s.linkAccess(link), true
}

// serve runs an admitted socket until the session ends, the viewer leaves or
// falls behind. The reader and the badge loop end with ctx; serve returns
// only once they have (the socket is closed by then, which ends the
// reader's Read).
func (v *viewer) serve(ctx context.Context, cancel context.CancelFunc, entry Entry, watcher Watcher, guard *access) {
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { defer wg.Done(); v.read(ctx, cancel) }()
	go func() { defer wg.Done(); v.states(ctx, entry) }()
	go func() { defer wg.Done(); v.keepalive(ctx, cancel) }()
	if guard != nil {
		wg.Add(1)
		go func() { defer wg.Done(); v.guard(ctx, *guard) }()
	}
	defer wg.Wait()
	defer cancel()
	err := v.follow(ctx, watcher)
	switch {
	case errors.Is(err, io.EOF):
		v.c.Close(websocket.StatusNormalClosure, "session closed")
	case ctx.Err() == nil && err != nil:
		v.c.Close(websocket.StatusGoingAway, "dropped")
	}
}

// catchUpBytes is the most output one frame streams: beyond it (4 MB/s at
// frameEvery, far above what a person reads) the viewer jumps to the
// screen as it is, with a gap mark.
const catchUpBytes = 64 << 10

// outputBytes is the output a frame's events carry.
func outputBytes(evs []record.Event) int {
	n := 0
	for _, ev := range evs {
		if ev.Kind == record.KindOutput {
			n += len(ev.Data)
		}
	}
	return n
}

// linkFor checks a share token for session id.
func (s *Server) linkFor(token string, id messages.SessionID) (Link, error) {
	if s.opts.Links == nil || token == "" {
		return Link{}, ErrLinkRefused
	}
	return s.opts.Links.Check(token, id)
}

// access is what opened a socket, watched while it is open: a share
// link or a login.
type access struct {
	done    <-chan struct{}      // closed when revoked (or swept after expiry)
	left    func() time.Duration // until it expires
	live    func() bool          // still valid (re-checked each stateEvery)
	revoked string               // the close reason when done closes before expiry
	expired string               // the close reason at expiry
}

func (s *Server) linkAccess(link Link) *access {
	return &access{
		done: link.Done(), left: func() time.Duration { return s.opts.Links.Left(link) },
		live:    func() bool { return s.opts.Links.Live(link) },
		revoked: "the share link was revoked", expired: "the share link expired",
	}
}

func (s *Server) loginAccess(l *login) *access {
	return &access{
		done: l.done, left: func() time.Duration { return l.expires.Sub(s.ops.now()) },
		live:    func() bool { return s.ops.live(l) },
		revoked: "logged out", expired: "the login expired",
	}
}

// guard closes the socket, with a reason, once a ends: at once when it
// is revoked, at its expiry, and at the latest a stateEvery after it
// stopped being valid (a clock that is not the timers').
func (v *viewer) guard(ctx context.Context, a access) {
	tick := time.NewTicker(stateEvery)
	defer tick.Stop()
	expiry := time.NewTimer(max(a.left(), 0))
	defer expiry.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-a.done:
		case <-expiry.C:
			if left := a.left(); left > 0 {
				expiry.Reset(left)
				continue
			}
		case <-tick.C:
			if a.live() {
				continue
			}
		}
		reason, code := a.revoked, "revoked"
		if a.left() <= 0 {
			reason, code = a.expired, "expired"
		}
		v.srv.opts.Log.Info().Str("session", string(v.id)).Msg("view: socket closed: " + reason)
		sctx, cancel := context.WithTimeout(ctx, time.Second)
		_ = v.send(sctx, map[string]any{"t": "error", "code": code, "message": reason})
		cancel()
		v.c.Close(websocket.StatusPolicyViolation, reason)
		return
	}
}

// keepalive pings the viewer every pingEvery and drops it when no pong
// comes within writeTimeout (a browser answers by itself, even in a
// hidden tab; the pong is read by the reader, v.read).
func (v *viewer) keepalive(ctx context.Context, cancel context.CancelFunc) {
	t := time.NewTicker(pingEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		pctx, pcancel := context.WithTimeout(ctx, writeTimeout)
		err := v.c.Ping(pctx)
		pcancel()
		if err != nil {
			if ctx.Err() == nil {
				v.srv.opts.Log.Info().Str("session", string(v.id)).Msg("view: viewer dropped: no answer to a ping")
			}
			cancel()
			return
		}
	}
}

// viewer is one live view's socket.
type viewer struct {
	c   *websocket.Conn
	srv *Server
	id  messages.SessionID
	// readOnly: a share link's page, which never takes control.
	readOnly bool

	// mu orders the control messages: hold is this page's hold (kept,
	// stale, after it moved on: the session refuses it then), sent the
	// control the page was last told.
	mu      sync.Mutex
	hold    Controller
	sent    *messages.Control
	sentYou bool

	// msgs counts the page's messages (readText's rate bound); only the
	// reading goroutine touches it.
	msgs bucket
}

// errRefusedMessage: readText closed the socket over a message the page
// must not send (binary, or one too many).
var errRefusedMessage = errors.New("view: message refused")

// readText reads the page's next message, which must be text, within
// the message rate: otherwise it closes the socket with the reason and
// returns errRefusedMessage.
func (v *viewer) readText(ctx context.Context) ([]byte, error) {
	typ, r, err := v.c.Reader(ctx)
	if err != nil {
		return nil, err
	}
	b, err := v.srv.large.readMessage(ctx, r)
	if err != nil {
		return nil, err
	}
	if typ != websocket.MessageText {
		v.c.Close(websocket.StatusUnsupportedData, "binary message: the page speaks JSON text")
		return nil, errRefusedMessage
	}
	if v.msgs.levelAt(time.Now(), msgRate) >= msgBurst {
		v.c.Close(websocket.StatusPolicyViolation, "too many messages")
		return nil, errRefusedMessage
	}
	v.msgs.level++
	return b, nil
}

func (v *viewer) readHello(ctx context.Context) (hello, error) {
	ctx, cancel := context.WithTimeout(ctx, helloTimeout)
	defer cancel()
	var h hello
	b, err := v.readText(ctx)
	if err != nil {
		return h, err
	}
	if err := json.Unmarshal(b, &h); err != nil || h.T != "hello" {
		return h, errors.New("view: hello expected")
	}
	return h, nil
}

// send writes one message, within writeTimeout: a viewer that cannot
// take it is dropped.
func (v *viewer) send(ctx context.Context, m any) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, writeTimeout)
	defer cancel()
	return v.c.Write(ctx, websocket.MessageText, b)
}

// states sends the session's badge and its control when they change.
func (v *viewer) states(ctx context.Context, first Entry) {
	t := time.NewTicker(stateEvery)
	defer t.Stop()
	var last messages.Activity
	e := first
	for {
		a := e.Activity
		if a.Badge != last.Badge || a.Reader != last.Reader || !sameCode(a.ExitCode, last.ExitCode) {
			if v.send(ctx, map[string]any{"t": "state", "badge": a.Badge, "reader": a.Reader, "exitCode": a.ExitCode}) != nil {
				return
			}
			last = a
		}
		if v.control(ctx, e.Control) != nil {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		next, err := v.srv.opts.Source.Describe(ctx, v.id)
		if err != nil {
			return
		}
		e = next
	}
}

func sameCode(a, b *int) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

// follow sends the session's frames until it ends (io.EOF), the socket
// fails, or ctx ends.
func (v *viewer) follow(ctx context.Context, w Watcher) error {
	var last time.Time
	for {
		if wait := frameEvery - time.Since(last); wait > 0 {
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		f, err := w.Next(ctx)
		if errors.Is(err, io.EOF) {
			if serr := v.send(ctx, map[string]any{"t": "end"}); serr != nil {
				return serr
			}
			return io.EOF
		}
		if err != nil {
			return err
		}
		last = time.Now()
		if f.Picture == nil && outputBytes(f.Events) > catchUpBytes {
			// Too far behind to draw every byte: the screen now. A
			// person cannot read a flood; every viewer streaming it
			// would cost the machine the flood's bytes once per viewer.
			f = w.Skip()
		}
		if err := v.frame(ctx, f); err != nil {
			return err
		}
	}
}

// frame sends one watch frame: the picture, then the events: output as
// binary messages (8 bytes of the newest event's number, big-endian, then
// the bytes as the terminal printed them; the page's terminal joins a
// character split between two), consecutive output joined up to
// frameBytes and never split within an event, so that a viewer resuming
// after a message's number misses and repeats nothing; resizes as JSON.
func (v *viewer) frame(ctx context.Context, f actors.Frame) error {
	if p := f.Picture; p != nil {
		msg, err := v.srv.pictures.message(p, f.Gap)
		if err != nil {
			return err
		}
		wctx, cancel := context.WithTimeout(ctx, writeTimeout)
		err = v.c.Write(wctx, websocket.MessageText, msg)
		cancel()
		if err != nil {
			return err
		}
	}
	out := make([]byte, 8, 8+frameBytes)
	flush := func(seq uint64) error {
		if len(out) == 8 {
			return nil
		}
		binary.BigEndian.PutUint64(out[:8], seq)
		wctx, cancel := context.WithTimeout(ctx, writeTimeout)
		defer cancel()
		err := v.c.Write(wctx, websocket.MessageBinary, out)
		out = out[:8]
		return err
	}
	var seq uint64
	for _, ev := range f.Events {
		switch ev.Kind {
		case record.KindOutput:
			if len(out) > 8 && len(out)+len(ev.Data) > 8+frameBytes {
				if err := flush(seq); err != nil {
					return err
				}
			}
			out = append(out, ev.Data...)
		case record.KindResize:
			if err := flush(seq); err != nil {
				return err
			}
			if err := v.send(ctx, map[string]any{"t": "resize", "seq": ev.Seq, "rows": ev.Rows, "cols": ev.Cols}); err != nil {
				return err
			}
		}
		seq = ev.Seq
	}
	return flush(seq)
}
