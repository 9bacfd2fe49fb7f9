package view

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/ptyactor/ptyactor/messages"
)

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
// copy behind in a dropped buffer). It is written by hand because
// encoding/json decodes a string only into a Go string, a copy of the
// secret that could not be zeroed.
func (b *secretBytes) UnmarshalJSON(data []byte) error {
	if len(data) < 2 || data[0] != '"' || data[len(data)-1] != '"' {
		return errors.New("the secret is a JSON string")
	}
	in := data[1 : len(data)-1]
	out := make([]byte, 0, len(in))
	for i := 0; i < len(in); i++ {
		if in[i] != '\\' {
			out = append(out, in[i])
			continue
		}
		var ok bool
		if out, i, ok = unescape(out, in, i+1); !ok {
			return errors.New("a bad escape in the secret")
		}
	}
	*b = out
	return nil
}

// shortEscapes are JSON's one-letter escapes, by the letter after the backslash.
var shortEscapes = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// unescape appends to out the character of the escape whose letter is at
// in[i] (just after its backslash), and returns the index of its last byte; a
// \u escape of a UTF-16 high surrogate takes the low one after it, as
// JSON writes a character outside the BMP. ok is false for a bad escape.
func unescape(out, in []byte, i int) (_ []byte, last int, ok bool) {
	if i >= len(in) {
		return out, i, false
	}
	if c := shortEscapes[in[i]]; c != 0 {
		return append(out, c), i, true
	}
	if in[i] != 'u' {
		return out, i, false
	}
	r, ok := hex4(in, i+1)
	if !ok {
		return out, i, false
	}
	i += 4
	if utf16.IsSurrogate(r) && i+2 < len(in) && in[i+1] == '\\' && in[i+2] == 'u' {
		if r2, ok := hex4(in, i+3); ok {
			if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
				r = d
				i += 6
			}
		}
	}
	return utf8.AppendRune(out, r), i, true
}

// hex4 reads the four hex digits of a \u escape at in[i:].
func hex4(in []byte, i int) (rune, bool) {
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
