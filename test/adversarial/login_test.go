package adversarial

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// wrongToken is a guess of the token's shape.
const wrongToken = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"

// Guessing the operator token from one source is throttled: after a
// burst of wrong tokens that source gets HTTP 429 with Retry-After,
// unchecked, and the log says so a few times, not once per try. The
// right token from the operator's own source logs in meanwhile; and the
// throttled source itself, once its Retry-After passed, may try again.
func TestLoginThrottledPerSource(t *testing.T) {
	s := Start(t, Options{})
	attacker := s.From("127.0.0.2")
	start := time.Now()
	wrong, throttled := 0, 0
	var retry string
	for i := 0; i < 200 && throttled < 5; i++ {
		r := attacker.LoginReply(wrongToken, "Origin", s.Origin())
		switch r.Status {
		case http.StatusUnauthorized:
			// Checked: the burst, then as much as leaked since (one a
			// second).
			wrong++
		case http.StatusTooManyRequests:
			throttled++
			retry = r.Header.Get("Retry-After")
		default:
			t.Fatalf("wrong token %d: HTTP %d %q", i, r.Status, r.Body)
		}
		if LoginCookie(r) != nil {
			t.Fatal("a wrong token got a cookie")
		}
	}
	elapsed := time.Since(start)
	t.Logf("one source: %d wrong tokens checked in %v before and between %d throttled answers", wrong, elapsed, throttled)
	if throttled == 0 {
		t.Fatalf("200 wrong tokens from one source, none throttled")
	}
	if max := 10 + int(elapsed/time.Second) + 1; wrong > max {
		t.Fatalf("%d wrong tokens checked in %v: the throttle lets through at most %d", wrong, elapsed, max)
	}
	if n, err := strconv.Atoi(retry); err != nil || n < 1 {
		t.Fatalf("Retry-After %q", retry)
	}
	// No lock-out: the operator, from their own source, logs in.
	s.Login()
	// The log is not flooded: a line when the episode begins and one
	// when the throttle starts, not one per try; and never the token.
	if n := strings.Count(s.Stderr(), "bad operator token"); n > 4 {
		t.Fatalf("%d log lines for one source's wrong tokens", n)
	}
	if strings.Contains(s.Stderr(), wrongToken) || strings.Contains(s.Stderr(), s.Token) {
		t.Fatal("a token is in the log")
	}
	// The throttled source is not locked out for good.
	waitFor(t, 30*time.Second, "the throttled source checked again", func() bool {
		return attacker.LoginReply(s.Token, "Origin", s.Origin()).Status == http.StatusNoContent
	})
}

// Many sources guessing at once (a storm) throttle overall: a source that
// tried a wrong token lately is refused unchecked while the storm lasts.
// The right token still logs in from a source that did not guess, and
// from one that mistyped once, after its Retry-After.
func TestLoginThrottledOverall(t *testing.T) {
	s := Start(t, Options{})
	const sources = 40
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[int]int{}
	attackers := make([]*Server, sources)
	for i := range attackers {
		attackers[i] = s.From(fmt.Sprintf("127.0.1.%d", i+1))
	}
	for _, a := range attackers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 6 {
				r, err := a.DoErr(http.MethodPost, "/api/login", []byte(`{"token":"`+wrongToken+`"}`), "Content-Type", "application/json")
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				codes[r.Status]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	t.Logf("storm: %d sources × 6 wrong tokens: %v", sources, codes)
	if codes[http.StatusOK] > 0 || codes[http.StatusNoContent] > 0 {
		t.Fatal("a wrong token logged in")
	}
	// No source tried more than 6, under its own burst of 10: only the
	// overall throttle refuses them.
	if codes[http.StatusTooManyRequests] == 0 {
		t.Fatalf("%d wrong tokens from %d sources, none throttled", 6*sources, sources)
	}
	// No lock-out: a source that did not guess logs in at once...
	s.From("127.0.2.1").Login()
	// ...and one that mistyped once, within its Retry-After.
	op := s.From("127.0.2.2")
	if r := op.LoginReply(wrongToken, "Origin", s.Origin()); r.Status != http.StatusUnauthorized {
		t.Fatalf("the operator's first (wrong) try: HTTP %d", r.Status)
	}
	waitFor(t, 30*time.Second, "the operator who mistyped logs in", func() bool {
		return op.LoginReply(s.Token, "Origin", s.Origin()).Status == http.StatusNoContent
	})
	if n := strings.Count(s.Stderr(), "bad operator token"); n > 3*sources {
		t.Fatalf("%d log lines for the storm's %d tries", n, 6*sources)
	}
}

// The login cookie: HttpOnly, SameSite=Strict, Path=/, with a Max-Age,
// not Secure over plain HTTP (a browser would drop it) and Secure over
// TLS; a new value at every login, never one the request brought
// (fixation: a planted cookie is refused before and after).
func TestLoginCookie(t *testing.T) {
	for _, tls := range []bool{false, true} {
		t.Run(map[bool]string{false: "http", true: "https"}[tls], func(t *testing.T) {
			s := Start(t, Options{TLS: tls})
			if tls && !strings.HasPrefix(s.Base, "https://") {
				t.Fatalf("base %s", s.Base)
			}
			const planted = "planted-by-an-attacker-0123456789abcdefghij"
			r := s.LoginReply(s.Token, "Origin", s.Origin(), "Cookie", "ptyactor_console="+planted)
			c := LoginCookie(r)
			if r.Status != http.StatusNoContent || c == nil {
				t.Fatalf("login: HTTP %d, cookie %v", r.Status, c)
			}
			if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || c.MaxAge <= 0 || c.Secure != tls {
				t.Fatalf("cookie %q: HttpOnly %v SameSite %v Path %q Max-Age %d Secure %v", r.Header.Values("Set-Cookie"), c.HttpOnly, c.SameSite, c.Path, c.MaxAge, c.Secure)
			}
			if c.Value == planted || len(c.Value) < 43 {
				t.Fatalf("the login kept the planted value or a short one: %q", c.Value)
			}
			if got := s.Do(http.MethodGet, "/api/sessions", nil, "Cookie", "ptyactor_console="+planted); got.Status != http.StatusUnauthorized {
				t.Fatalf("the planted cookie: HTTP %d", got.Status)
			}
			if got := s.Do(http.MethodGet, "/api/sessions", nil, "Cookie", CookieHeader(c)); got.Status != http.StatusOK {
				t.Fatalf("the login's cookie: HTTP %d", got.Status)
			}
			if again := s.Login(); again.Value == c.Value {
				t.Fatal("two logins got the same cookie value")
			}
		})
	}
}

// A page of another origin cannot use the console with the operator's
// cookie: the login POST, the API, logout and the secret API refuse a
// foreign Origin (and "null", a sandboxed frame's); no cookie is set.
func TestForeignOriginRefused(t *testing.T) {
	s := Start(t, Options{})
	c := s.MCP()
	id := c.Open()
	cookie := s.Login()
	for _, origin := range []string{"http://evil.example", "null", "http://127.0.0.1:1"} {
		for _, tc := range []struct{ method, path, body string }{
			{http.MethodPost, "/api/login", `{"token":"` + s.Token + `"}`},
			{http.MethodGet, "/api/sessions", ""},
			{http.MethodPost, "/api/logout", ""},
			{http.MethodPost, "/api/secret/" + id + "/prompt", `{"token":"x"}`},
			{http.MethodPost, "/api/secret/" + id, `{"token":"x","secret":"y"}`},
		} {
			var body []byte
			if tc.body != "" {
				body = []byte(tc.body)
			}
			r := s.Do(tc.method, tc.path, body, "Origin", origin, "Cookie", CookieHeader(cookie), "Content-Type", "application/json")
			if r.Status != http.StatusForbidden || LoginCookie(r) != nil {
				t.Errorf("%s %s from Origin %s: HTTP %d (cookie %v)", tc.method, tc.path, origin, r.Status, LoginCookie(r))
			}
		}
		if _, res, err := s.Dial(ctx(t), "/api/watch/"+id, DialOptions{Origin: origin, Cookie: cookie}); err == nil || res == nil || res.StatusCode != http.StatusForbidden {
			t.Errorf("a control socket from Origin %s: %v (%v)", origin, err, res)
		}
	}
	// The logout refused above did not log the operator out.
	if r := s.Do(http.MethodGet, "/api/sessions", nil, "Cookie", CookieHeader(cookie)); r.Status != http.StatusOK {
		t.Fatalf("the cookie after the refused requests: HTTP %d", r.Status)
	}
}
