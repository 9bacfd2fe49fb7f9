package view

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/ptyactor/ptyactor/messages"
)

// SecretLinkTTL is how long a secret link lives: a prompt waits for a
// person, not for days, and a link that leaked later is dead by then.
const SecretLinkTTL = 15 * time.Minute

// MaxSecretLinks bounds the secret links kept at once (a model that
// waits at prompts in a loop mints one per result); past it the link
// that expires first goes.
const MaxSecretLinks = 256

// MaxSecretBytes bounds a secret: a terminal reads a canonical line of
// at most 4095 bytes, and no password comes near this.
const MaxSecretBytes = 1024

// Refusals of a secret link. One error for a wrong, expired or another
// session's token (ErrSecretLinkRefused): a caller learns nothing about
// other links.
var (
	ErrSecretLinkRefused = errors.New("view: the secret link is not valid (wrong, expired, or for another session)")
	// ErrSecretLinkUsed: a secret was entered at the link's prompt.
	ErrSecretLinkUsed = errors.New("view: the secret link was used: a secret was entered at its prompt")
	// ErrSecretLinkBusy: a secret is being entered through the link now.
	ErrSecretLinkBusy = errors.New("view: a secret is being entered through this link")
)

// SecretLink is a secret link as its page sees it (never its token).
type SecretLink struct {
	Owner  messages.Owner
	Prompt messages.SecretPrompt
	// Standalone: the token alone opens the page; otherwise it also needs
	// the operator's console login.
	Standalone bool
	Expires    time.Time
}

// Secrets holds the one-shot links a person opens to type a secret at a
// secret prompt (messages.SecretPrompt: sudo, ssh, getpass, read -s)
// straight into the terminal, so that the secret never passes through the
// model. A link names one prompt's wait: it works until a secret was
// entered through it or another link to the same prompt (then it is
// spent), until the prompt no longer waits (then it is dead: the next
// prompt, even of the same program, gets a new link), or SecretLinkTTL.
//
// A link minted with standalone false also needs the operator's console
// login: the model may hold it (a tool result carries it), but cannot use
// it. One minted with standalone true opens with its token alone: for a
// link that goes to the person without passing through the model (an MCP
// client's URL-mode elicitation). Its maker learns that the secret was
// entered from Done(token), which is closed then.
//
// Like Links, only a hash of each token is kept, compared in constant
// time, and no token is logged.
type Secrets struct {
	now func() time.Time
	mu  sync.Mutex
	by  map[[sha256.Size]byte]*secretLink
}

type secretLink struct {
	SecretLink
	// state: live, busy (an entry in flight), used or dead (tombstones,
	// kept until they expire so the page can say why).
	state secretState
	done  chan struct{} // closed when a secret was entered at the prompt
}

type secretState int

const (
	secretLive secretState = iota
	secretBusy
	secretUsed
	secretDead
)

// NewSecrets makes an empty set; now is the clock (time.Now when nil).
func NewSecrets(now func() time.Time) *Secrets {
	if now == nil {
		now = time.Now
	}
	return &Secrets{now: now, by: map[[sha256.Size]byte]*secretLink{}}
}

// Mint makes a link to type a secret at prompt p, of owner's session
// p.Session: its token, which goes in the URL's fragment (a browser never
// sends one to a server). standalone: see Secrets.
func (s *Secrets) Mint(owner messages.Owner, p messages.SecretPrompt, standalone bool) (token string, err error) {
	if p.Session == "" {
		return "", messages.InvalidArgument("a secret prompt names its session")
	}
	var raw [16]byte // 128 random bits
	if _, err := rand.Read(raw[:]); err != nil {
		return "", err
	}
	token = base64.RawURLEncoding.EncodeToString(raw[:])
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep()
	for len(s.by) >= MaxSecretLinks {
		s.dropFirst()
	}
	s.by[sha256.Sum256([]byte(token))] = &secretLink{
		SecretLink: SecretLink{Owner: owner, Prompt: p, Standalone: standalone, Expires: s.now().Add(SecretLinkTTL)},
		done:       make(chan struct{}),
	}
	return token, nil
}

// Done returns a channel closed once a person entered a secret at the
// prompt of token's link (through it or another link to that prompt);
// nil (which never closes) for a token of no link. A link that dies
// (its prompt gone, expired) never closes it: wait on it with a deadline
// of your own, or with the session's next result.
func (s *Secrets) Done(token string) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l, ok := s.by[sha256.Sum256([]byte(token))]; ok {
		return l.done
	}
	return nil
}

// Revoke kills token's link (an elicitation declined); it reports
// whether the link was live.
func (s *Secrets) Revoke(token string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.by[sha256.Sum256([]byte(token))]
	if !ok || l.state != secretLive {
		return false
	}
	l.state = secretDead
	return true
}

// Check returns the live link token opens for session: ErrSecretLinkRefused
// (wrong, expired, another session's), ErrSecretLinkUsed, ErrSecretLinkBusy,
// or messages.ErrSecretPromptGone (a dead link).
func (s *Secrets) Check(token string, session messages.SessionID) (SecretLink, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, err := s.find(token, session)
	if err != nil {
		return SecretLink{}, err
	}
	return l.SecretLink, nil
}

// find is Check's lookup; the caller holds mu.
func (s *Secrets) find(token string, session messages.SessionID) (*secretLink, error) {
	l, ok := s.by[sha256.Sum256([]byte(token))]
	if !ok || s.now().After(l.Expires) || subtle.ConstantTimeCompare([]byte(l.Prompt.Session), []byte(session)) != 1 {
		return nil, ErrSecretLinkRefused
	}
	switch l.state {
	case secretUsed:
		return nil, ErrSecretLinkUsed
	case secretDead:
		return nil, messages.ErrSecretPromptGone
	case secretBusy:
		return nil, ErrSecretLinkBusy
	}
	return l, nil
}

// claim takes token's live link for one entry: until release, it refuses
// a second one (two pages, or a double submit, never write twice).
func (s *Secrets) claim(token string, session messages.SessionID) (SecretLink, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, err := s.find(token, session)
	if err != nil {
		return SecretLink{}, err
	}
	l.state = secretBusy
	return l.SecretLink, nil
}

// release ends token's claimed entry: entered spends every link to the
// prompt and closes their Done; otherwise the link is dead (its prompt
// gone, or the write failed: a secret half written is no prompt to type
// into again).
func (s *Secrets) release(token string, entered bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.by[sha256.Sum256([]byte(token))]
	if !ok {
		return
	}
	if !entered {
		// Unless another link's entry spent it meanwhile: then it stays
		// used, which is what its page should say.
		if l.state == secretBusy {
			l.state = secretDead
		}
		return
	}
	for _, o := range s.by {
		if o.Prompt == l.Prompt && o.state != secretUsed {
			o.state = secretUsed
			close(o.done)
		}
	}
}

// sweep drops expired links; the caller holds mu.
func (s *Secrets) sweep() {
	now := s.now()
	for h, l := range s.by {
		if now.After(l.Expires) && l.state != secretBusy {
			delete(s.by, h)
		}
	}
}

// dropFirst drops the link that expires first, a busy one last; the
// caller holds mu.
func (s *Secrets) dropFirst() {
	var first [sha256.Size]byte
	var fl *secretLink
	before := func(a, b *secretLink) bool {
		if ab, bb := a.state == secretBusy, b.state == secretBusy; ab != bb {
			return bb
		}
		return a.Expires.Before(b.Expires)
	}
	for h, l := range s.by {
		if fl == nil || before(l, fl) {
			first, fl = h, l
		}
	}
	delete(s.by, first)
}

// The secret page's API. The page (GET /secret/<id>#token=...) posts the
// token from its URL's fragment, never in a URL:
//
//	POST /api/secret/<id>/prompt {"token"} → {"session","name","line","reader","expiresAt"}
//	POST /api/secret/<id> {"token","secret"} → 204: written, with Enter
//
// Refusals are JSON {"code","message"}: 401 not_logged_in (a link that
// needs the console login), 403 forbidden (wrong, expired, another
// session's token), 409 secret_busy, 410 secret_prompt_gone (the prompt
// no longer waits) or secret_link_used, 400 bad_request or bad_secret,
// 404 not_found (no Options.Secrets). Neither the body nor its secret is
// ever logged; the body is read into one bounded buffer, zeroed after.

// maxSecretBody bounds the page's request: a token, and a secret of
// MaxSecretBytes escaped as JSON.
const maxSecretBody = 4 << 10

// secretTimeout bounds the write of a secret. It does not end with the
// request: a page that goes away mid-write must not leave the link's
// state unknown.
const secretTimeout = 10 * time.Second

// secretRequest is what the page posts.
type secretRequest struct {
	Token  string      `json:"token"`
	Secret secretBytes `json:"secret"`
}

// secretBytes is a JSON string decoded into bytes of its own (never a Go
// string, which cannot be zeroed).
type secretBytes []byte

// UnmarshalJSON decodes a JSON string; the decoder checked its syntax.
// Escapes only shrink, so the output never grows (and never leaves a
// copy behind in a dropped buffer).
func (b *secretBytes) UnmarshalJSON(data []byte) error {
	if len(data) < 2 || data[0] != '"' || data[len(data)-1] != '"' {
		return errors.New("the secret is a JSON string")
	}
	in := data[1 : len(data)-1]
	out := make([]byte, 0, len(in))
	hex4 := func(i int) (rune, bool) {
		if i+4 > len(in) {
			return 0, false
		}
		var r rune
		for _, c := range in[i : i+4] {
			switch {
			case c >= '0' && c <= '9':
				r = r<<4 | rune(c-'0')
			case c >= 'a' && c <= 'f':
				r = r<<4 | rune(c-'a'+10)
			case c >= 'A' && c <= 'F':
				r = r<<4 | rune(c-'A'+10)
			default:
				return 0, false
			}
		}
		return r, true
	}
	for i := 0; i < len(in); i++ {
		c := in[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		if i++; i >= len(in) {
			return errors.New("a bad escape in the secret")
		}
		switch in[i] {
		case '"', '\\', '/':
			out = append(out, in[i])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(i + 1)
			if !ok {
				return errors.New("a bad escape in the secret")
			}
			i += 4
			if utf16.IsSurrogate(r) && i+2 < len(in) && in[i+1] == '\\' && in[i+2] == 'u' {
				if r2, ok := hex4(i + 3); ok {
					if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
						r = d
						i += 6
					}
				}
			}
			out = utf8.AppendRune(out, r)
		default:
			return errors.New("a bad escape in the secret")
		}
	}
	*b = out
	return nil
}

// checkSecret refuses what is no line of a password: nothing, too much,
// or a control character, which the terminal would act on (Enter would
// end the line early and send the rest to the next reader, the shell;
// Ctrl-C, Ctrl-U, DEL edit or signal).
func checkSecret(p []byte) error {
	switch {
	case len(p) == 0:
		return errors.New("the secret is empty")
	case len(p) > MaxSecretBytes:
		return fmt.Errorf("the secret is over %d bytes", MaxSecretBytes)
	}
	for _, c := range p {
		if c < 0x20 || c == 0x7f {
			return errors.New("the secret holds a control character (Enter, Tab, Ctrl-…): type it without")
		}
	}
	return nil
}

// readSecretRequest reads and decodes the page's request into req; the
// caller zeroes req.Secret. It answers a refusal itself (ok false).
func (s *Server) readSecretRequest(w http.ResponseWriter, r *http.Request, req *secretRequest) (ok bool) {
	buf := make([]byte, maxSecretBody+1)
	defer clear(buf)
	n, err := io.ReadFull(r.Body, buf)
	switch {
	case n > maxSecretBody:
		s.secretRefuse(w, r, http.StatusRequestEntityTooLarge, "bad_request", "the request is too large")
		return false
	case err != nil && err != io.EOF && err != io.ErrUnexpectedEOF:
		s.secretRefuse(w, r, http.StatusBadRequest, "bad_request", "the request could not be read")
		return false
	}
	if err := json.Unmarshal(buf[:n], req); err != nil {
		clear(req.Secret)
		s.secretRefuse(w, r, http.StatusBadRequest, "bad_request", "the request is not {token, secret} in JSON")
		return false
	}
	return true
}

// secretLinkFor checks the request's token for session id, and the
// console login when the link needs it; it answers a refusal itself.
func (s *Server) secretLinkFor(w http.ResponseWriter, r *http.Request, id messages.SessionID, token string, claim bool) (SecretLink, bool) {
	if s.opts.Secrets == nil {
		s.secretRefuse(w, r, http.StatusNotFound, "not_found", "this server makes no secret links")
		return SecretLink{}, false
	}
	check := s.opts.Secrets.Check
	if claim {
		check = s.opts.Secrets.claim
	}
	// The login is checked before the link is claimed: a refused page
	// leaves the link as it was.
	link, err := s.opts.Secrets.Check(token, id)
	if err == nil && !link.Standalone && !s.operator(r) {
		s.secretRefuse(w, r, http.StatusUnauthorized, "not_logged_in", "this link needs the console's login: open the console URL first")
		return SecretLink{}, false
	}
	if err == nil {
		link, err = check(token, id)
	}
	switch {
	case err == nil:
		return link, true
	case errors.Is(err, ErrSecretLinkUsed):
		s.secretRefuse(w, r, http.StatusGone, "secret_link_used", "this link was used: the secret was entered")
	case errors.Is(err, messages.ErrSecretPromptGone):
		s.secretRefuse(w, r, http.StatusGone, "secret_prompt_gone", "that secret prompt no longer waits")
	case errors.Is(err, ErrSecretLinkBusy):
		s.secretRefuse(w, r, http.StatusConflict, "secret_busy", "a secret is being entered through this link")
	default:
		s.secretRefuse(w, r, http.StatusForbidden, "forbidden", "this link is not valid (wrong, expired, or for another session)")
	}
	return SecretLink{}, false
}

// secretPrompt answers what the page shows: the session and the prompt.
func (s *Server) secretPrompt(w http.ResponseWriter, r *http.Request) {
	id := messages.SessionID(r.PathValue("id"))
	var req secretRequest
	if !s.readSecretRequest(w, r, &req) {
		return
	}
	clear(req.Secret) // none expected here
	link, ok := s.secretLinkFor(w, r, id, req.Token, false)
	if !ok {
		return
	}
	name := ""
	if e, err := s.opts.Source.Describe(r.Context(), id); err == nil {
		name = e.Name
	} else if errors.Is(err, messages.ErrNoSession) {
		s.secretRefuse(w, r, http.StatusGone, "secret_prompt_gone", "the session is gone")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"session": id, "name": name, "line": link.Prompt.Line, "reader": link.Prompt.Reader,
		"expiresAt": link.Expires.UTC().Format(time.RFC3339),
	})
}

// enterSecret types the page's secret at the link's prompt, once.
func (s *Server) enterSecret(w http.ResponseWriter, r *http.Request) {
	id := messages.SessionID(r.PathValue("id"))
	var req secretRequest
	if !s.readSecretRequest(w, r, &req) {
		return
	}
	defer clear(req.Secret)
	if err := checkSecret(req.Secret); err != nil {
		s.secretRefuse(w, r, http.StatusBadRequest, "bad_secret", err.Error())
		return
	}
	link, ok := s.secretLinkFor(w, r, id, req.Token, true)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), secretTimeout)
	defer cancel()
	// The session zeroes its copy once written; this one is zeroed by the
	// deferred clear (never the session's: it may outlive a timeout).
	err := s.opts.Source.EnterSecret(ctx, id, link.Prompt, bytes.Clone(req.Secret))
	s.opts.Secrets.release(req.Token, err == nil)
	switch {
	case err == nil:
		s.opts.Log.Info().Str("session", string(id)).Msg("view: a person entered a secret at a secret prompt")
		w.WriteHeader(http.StatusNoContent)
	case errors.Is(err, messages.ErrSecretPromptGone), errors.Is(err, messages.ErrNoSession),
		errors.Is(err, messages.ErrSessionClosing), errors.Is(err, messages.ErrSessionExited):
		s.secretRefuse(w, r, http.StatusGone, "secret_prompt_gone", "that secret prompt no longer waits: nothing was written")
	default:
		s.secretRefuse(w, r, http.StatusInternalServerError, "error", err.Error())
	}
}

// secretRefuse answers a refused secret request in JSON and logs why:
// the path and the status, never the body.
func (s *Server) secretRefuse(w http.ResponseWriter, r *http.Request, status int, code, why string) {
	s.opts.Log.Info().Str("path", r.URL.Path).Str("origin", r.Header.Get("Origin")).Int("status", status).Str("code", code).Msg("view: refused: " + why)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"code": code, "message": why})
}
