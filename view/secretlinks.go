package view

import (
	"crypto/subtle"
	"errors"
	"sync"
	"time"

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
// Its tokens are kept as every token of the view is (tokenStore): hashed,
// never as text, never logged.
type Secrets struct {
	mu    sync.Mutex
	store tokenStore[*secretLink]
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
	return &Secrets{store: newTokenStore[*secretLink](now)}
}

// Mint makes a link to type a secret at prompt p, of owner's session
// p.Session: its token, which goes in the URL's fragment (a browser never
// sends one to a server). standalone: see Secrets.
func (s *Secrets) Mint(owner messages.Owner, p messages.SecretPrompt, standalone bool) (token string, err error) {
	if p.Session == "" {
		return "", messages.InvalidArgument("a secret prompt names its session")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep()
	for s.store.len() >= MaxSecretLinks {
		s.dropFirst()
	}
	l := &secretLink{
		SecretLink: SecretLink{Owner: owner, Prompt: p, Standalone: standalone, Expires: s.store.now().Add(SecretLinkTTL)},
		done:       make(chan struct{}),
	}
	return s.store.issue(128, l, l.Expires)
}

// Done returns a channel closed once a person entered a secret at the
// prompt of token's link (through it or another link to that prompt);
// nil (which never closes) for a token of no link. A link that dies
// (its prompt gone, expired) never closes it: wait on it with a deadline
// of your own, or with the session's next result.
func (s *Secrets) Done(token string) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.store.find(token); ok {
		return e.v.done
	}
	return nil
}

// Revoke kills token's link (an elicitation declined); it reports
// whether the link was live.
func (s *Secrets) Revoke(token string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.store.find(token)
	if !ok || e.v.state != secretLive {
		return false
	}
	e.v.state = secretDead
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
	e, ok := s.store.live(token)
	if !ok || subtle.ConstantTimeCompare([]byte(e.v.Prompt.Session), []byte(session)) != 1 {
		return nil, ErrSecretLinkRefused
	}
	switch e.v.state {
	case secretUsed:
		return nil, ErrSecretLinkUsed
	case secretDead:
		return nil, messages.ErrSecretPromptGone
	case secretBusy:
		return nil, ErrSecretLinkBusy
	}
	return e.v, nil
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
	e, ok := s.store.find(token)
	if !ok {
		return
	}
	l := e.v
	if !entered {
		// Unless another link's entry spent it meanwhile: then it stays
		// used, which is what its page should say.
		if l.state == secretBusy {
			l.state = secretDead
		}
		return
	}
	s.store.each(func(o *tokenEntry[*secretLink]) {
		if o.v.Prompt == l.Prompt && o.v.state != secretUsed {
			o.v.state = secretUsed
			close(o.v.done)
		}
	})
}

// sweep drops expired links, never one with an entry in flight; the
// caller holds mu.
func (s *Secrets) sweep() {
	s.store.sweep(func(e *tokenEntry[*secretLink]) bool { return e.v.state != secretBusy }, nil)
}

// dropFirst drops the link that expires first, a busy one last; the
// caller holds mu.
func (s *Secrets) dropFirst() {
	var first *tokenEntry[*secretLink]
	before := func(a, b *tokenEntry[*secretLink]) bool {
		if ab, bb := a.v.state == secretBusy, b.v.state == secretBusy; ab != bb {
			return bb
		}
		return a.expires.Before(b.expires)
	}
	s.store.each(func(e *tokenEntry[*secretLink]) {
		if first == nil || before(e, first) {
			first = e
		}
	})
	s.store.drop(func(e *tokenEntry[*secretLink]) bool { return e == first })
}
