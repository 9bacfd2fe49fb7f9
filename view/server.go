package view

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"strconv"
	"time"

	"github.com/ptyactor/ptyactor/actors"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/rs/zerolog"
)

// Source is what the pages show: the sessions a console lists, and a
// session to follow. ServiceSource serves a Service's sessions; a Go user
// may give their own (a subset, or sessions of several services).
type Source interface {
	// Sessions lists the sessions, with what each is doing.
	Sessions(ctx context.Context) ([]Entry, error)
	// Describe is one session's entry. An unknown session is
	// messages.ErrNoSession.
	Describe(ctx context.Context, id messages.SessionID) (Entry, error)
	// Watch follows session id from after event since (0: a picture
	// first). An unknown session is messages.ErrNoSession.
	Watch(ctx context.Context, id messages.SessionID, since uint64) (Watcher, error)
	// TakeControl gives session id's input to a person (the console's
	// operator): actors.Session.TakeControl. An unknown session is
	// messages.ErrNoSession.
	TakeControl(ctx context.Context, id messages.SessionID, req messages.TakeControlRequest) (Controller, error)
	// EnterSecret types a person's secret, with Enter, at prompt p of
	// session id if that prompt still waits (actors.Session.EnterSecret),
	// else messages.ErrSecretPromptGone and nothing is written. It may
	// keep secret until written (then zeroes it): the caller must not
	// reuse it. An unknown session is messages.ErrNoSession.
	EnterSecret(ctx context.Context, id messages.SessionID, p messages.SecretPrompt, secret []byte) error
}

// Controller is a person's hold on a session's input: actors.Control is
// one. Once control moved on, Type, Resize and Return fail with
// messages.ErrControlStale and nothing is written.
type Controller interface {
	// State is the control the hold began with.
	State() messages.Control
	Epoch() uint64
	// Type writes the person's input, after their earlier input.
	Type(ctx context.Context, p []byte) error
	// Resize sets the terminal's size (only the holder resizes it).
	Resize(ctx context.Context, rows, cols int) error
	// Return hands the input back to the agent.
	Return(ctx context.Context) (messages.Handback, error)
}

var _ Controller = (*actors.Control)(nil)

// Watcher is a followed session: actors.Watch is one.
type Watcher interface {
	Next(ctx context.Context) (actors.Frame, error)
	// Skip jumps to a picture of the screen now (and a gap).
	Skip() actors.Frame
}

// Entry is one session in the console's list.
type Entry struct {
	ID       messages.SessionID
	Name     string
	Owner    messages.Owner
	Host     string
	Activity messages.Activity
	// Control is who holds the session's input.
	Control messages.Control
}

// Options configure a Server.
type Options struct {
	// Source is the sessions shown; required.
	Source Source
	// OperatorToken logs an operator in (the console's URL carries it in
	// its fragment; a bearer token works too). It never reaches the model.
	OperatorToken string
	// Operator, when set, decides instead of the token whether a request
	// is an operator's (a Go user's own login).
	Operator func(r *http.Request) bool
	// Links are the share links the view accepts; nil: none.
	Links *Links
	// Secrets are the secret links the view accepts (a person types a
	// secret at a secret prompt, /secret/<id>); nil: none.
	Secrets *Secrets
	// Assets holds the pages and xterm.js (package view/assets).
	Assets fs.FS
	// Origins are origins allowed besides the server's own host.
	Origins []string
	// Hosts are host names a request may name (its Host header) besides
	// loopback ones, when the server listens on loopback (a reverse
	// proxy's name): any other is refused there (DNS rebinding).
	Hosts []string
	// LoginTTL is how long a login lasts on the server (and its cookie
	// in the browser); 0: DefaultLoginTTL.
	LoginTTL time.Duration
	// Log receives a line per refused request (never a token).
	Log zerolog.Logger
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// ControlIdle ends an operator's hold on a session's input after this
	// long without their input (0: messages.DefaultControlIdle).
	ControlIdle time.Duration
}

// Server serves the console, the live view and their WebSocket.
type Server struct {
	opts Options
	ops  *operators
	mux  *http.ServeMux
	// tries throttles wrong operator tokens (throttle.go).
	tries *throttle
	// pictures encodes each picture's message once (pictures.go).
	pictures pictureMessages
	// large reads the page messages beyond smallMessage, one at a time
	// (messages_in.go).
	large *largeReader
}

// New builds a Server.
func New(opts Options) (*Server, error) {
	if opts.Source == nil {
		return nil, errors.New("view: Options.Source is required")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.LoginTTL < 0 {
		return nil, errors.New("view: Options.LoginTTL is negative")
	}
	if opts.LoginTTL == 0 {
		opts.LoginTTL = DefaultLoginTTL
	}
	s := &Server{opts: opts, ops: newOperators(opts.OperatorToken, opts.LoginTTL, opts.Now), mux: http.NewServeMux(), tries: newThrottle(opts.Now), large: newLargeReader()}
	s.mux.HandleFunc("GET /{$}", s.page("console.html", true))
	s.mux.HandleFunc("GET /s/{id}", s.page("view.html", true))
	s.mux.HandleFunc("GET /v/{id}", s.page("view.html", false))
	if opts.Assets != nil {
		s.mux.Handle("GET /assets/", http.StripPrefix("/assets/", http.FileServerFS(opts.Assets)))
	}
	s.mux.HandleFunc("POST /api/login", s.login)
	s.mux.HandleFunc("POST /api/logout", s.logout)
	s.mux.HandleFunc("GET /api/sessions", s.sessions)
	s.mux.HandleFunc("GET /api/watch/{id}", s.watch)
	s.mux.HandleFunc("GET /secret/{id}", s.page("secret.html", false))
	s.mux.HandleFunc("POST /api/secret/{id}/prompt", s.secretPrompt)
	s.mux.HandleFunc("POST /api/secret/{id}", s.enterSecret)
	return s, nil
}

// ServeHTTP implements http.Handler: every request's Host (on loopback)
// and Origin are checked first, and the pages are never framed or
// cached.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	if !hostAllowed(r, s.opts.Hosts) {
		s.refuse(w, r, http.StatusForbidden, "host not allowed")
		return
	}
	if !sameOrigin(r, s.opts.Origins) {
		s.refuse(w, r, http.StatusForbidden, "origin not allowed")
		return
	}
	s.mux.ServeHTTP(w, r)
}

// operator reports whether r is an operator's.
func (s *Server) operator(r *http.Request) bool {
	if s.opts.Operator != nil {
		return s.opts.Operator(r)
	}
	return s.ops.request(r)
}

// page serves a page from the assets. The pages hold no secret and no
// data: they load what they show with the person's cookie or token.
func (s *Server) page(name string, _ bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.opts.Assets == nil {
			http.Error(w, "view: no pages (Options.Assets)", http.StatusNotFound)
			return
		}
		b, err := fs.ReadFile(s.opts.Assets, name)
		if err != nil {
			http.Error(w, "view: "+name+" missing", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(b)
	}
}

// login exchanges the operator token (in the body, never in a URL) for
// a cookie. Wrong tokens are throttled per source and overall
// (throttle.go); the right one is never refused for others' tries.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Token string `json:"token"`
	}
	src := source(r)
	if wait := s.tries.wait(src); wait > 0 {
		s.throttled(w, r, wait)
		return
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096)).Decode(&body); err != nil || !s.ops.tokenOK(body.Token) {
		if s.tries.failed(src) {
			s.refuse(w, r, http.StatusUnauthorized, "bad operator token")
		} else {
			http.Error(w, "view: bad operator token", http.StatusUnauthorized)
		}
		return
	}
	v, err := s.ops.login()
	if err != nil {
		http.Error(w, "view: "+err.Error(), http.StatusInternalServerError)
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: cookieName, Value: v, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: r.TLS != nil, MaxAge: max(1, int(s.opts.LoginTTL/time.Second)),
	})
	w.WriteHeader(http.StatusNoContent)
}

// logout ends the request's login on the server (its sockets are closed
// with it) and clears the browser's cookie. Without a login it does the
// same, harmlessly.
func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	if s.ops.logout(r) {
		s.opts.Log.Info().Msg("view: operator logged out")
	}
	http.SetCookie(w, &http.Cookie{
		Name: cookieName, Value: "", Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: r.TLS != nil, MaxAge: -1,
	})
	w.WriteHeader(http.StatusNoContent)
}

// throttled answers a login refused unchecked: its source (or everyone,
// in a storm) tried too many wrong tokens lately.
func (s *Server) throttled(w http.ResponseWriter, r *http.Request, wait time.Duration) {
	w.Header().Set("Retry-After", strconv.Itoa(int((wait+time.Second-1)/time.Second)))
	http.Error(w, "view: too many wrong operator tokens; try again later", http.StatusTooManyRequests)
}

// sessionJSON is one row of GET /api/sessions.
type sessionJSON struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Owner    string `json:"owner"`
	Host     string `json:"host"`
	Cwd      string `json:"cwd"`
	Program  string `json:"program"`
	Badge    string `json:"badge"`
	Reader   string `json:"reader,omitempty"`
	ExitCode *int   `json:"exitCode,omitempty"`
	IdleMs   *int64 `json:"idleMs,omitempty"`
	Rows     int    `json:"rows"`
	Cols     int    `json:"cols"`
	Seq      uint64 `json:"seq"`
	// Control is who holds the session's input.
	Control controlJSON `json:"control"`
}

// controlJSON is a session's holder in GET /api/sessions.
type controlJSON struct {
	Holder string `json:"holder"`
	Person bool   `json:"person"`
	Since  string `json:"since,omitempty"` // RFC 3339
}

func newControlJSON(c messages.Control) controlJSON {
	j := controlJSON{Holder: c.Holder, Person: c.Person}
	if j.Holder == "" {
		j.Holder = messages.AgentHolder
	}
	if !c.Since.IsZero() {
		j.Since = c.Since.UTC().Format(time.RFC3339)
	}
	return j
}

func (s *Server) sessions(w http.ResponseWriter, r *http.Request) {
	if !s.operator(r) {
		s.refuse(w, r, http.StatusUnauthorized, "not logged in")
		return
	}
	entries, err := s.opts.Source.Sessions(r.Context())
	if err != nil {
		http.Error(w, "view: "+err.Error(), http.StatusInternalServerError)
		return
	}
	now := s.opts.Now()
	out := make([]sessionJSON, 0, len(entries))
	for _, e := range entries {
		a := e.Activity
		j := sessionJSON{
			ID: string(e.ID), Name: e.Name, Owner: e.Owner.Label(), Host: e.Host, Cwd: a.Cwd, Program: a.Program,
			Badge: string(a.Badge), Reader: a.Reader, ExitCode: a.ExitCode, Rows: a.Rows, Cols: a.Cols, Seq: a.Seq,
			Control: newControlJSON(e.Control),
		}
		if !a.LastOutput.IsZero() {
			ms := now.Sub(a.LastOutput).Milliseconds()
			j.IdleMs = &ms
		}
		out = append(out, j)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

// refuse answers a refused request and logs why (never a token).
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, code int, why string) {
	s.opts.Log.Info().Str("path", r.URL.Path).Str("origin", r.Header.Get("Origin")).Int("status", code).Msg("view: refused: " + why)
	http.Error(w, "view: "+why, code)
}
