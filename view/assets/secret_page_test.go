package assets_test

import (
	"encoding/json"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/ptyactor/ptyactor/test/testkit"
	"github.com/ptyactor/ptyactor/view/assets"
)

// secretFake is the secret page's server side: the page, and its API
// answering what the test scripts; it records every request's URL and
// each secret request's body.
type secretFake struct {
	*httptest.Server
	mu      sync.Mutex
	urls    []string
	bodies  []map[string]string
	prompt  func() (int, string) // status, JSON
	answers []int                // the secret requests' statuses, in turn
}

func newSecretFake(t *testing.T) *secretFake {
	f := &secretFake{}
	mux := http.NewServeMux()
	mux.Handle("GET /assets/", http.StripPrefix("/assets/", http.FileServerFS(assets.FS())))
	mux.HandleFunc("GET /secret/{id}", func(w http.ResponseWriter, r *http.Request) {
		b, _ := fs.ReadFile(assets.FS(), "secret.html")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(b)
	})
	answer := func(w http.ResponseWriter, status int, body string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}
	mux.HandleFunc("POST /api/secret/{id}/prompt", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		p := f.prompt
		f.mu.Unlock()
		status, body := p()
		answer(w, status, body)
	})
	mux.HandleFunc("POST /api/secret/{id}", func(w http.ResponseWriter, r *http.Request) {
		var m map[string]string
		_ = json.NewDecoder(r.Body).Decode(&m)
		f.mu.Lock()
		f.bodies = append(f.bodies, m)
		status := http.StatusNoContent
		if len(f.answers) > 0 {
			status, f.answers = f.answers[0], f.answers[1:]
		}
		f.mu.Unlock()
		switch status {
		case http.StatusNoContent:
			w.WriteHeader(status)
		case http.StatusBadRequest:
			answer(w, status, `{"code":"bad_secret","message":"the secret holds a control character"}`)
		default:
			answer(w, status, `{"code":"secret_prompt_gone","message":"gone"}`)
		}
	})
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.urls = append(f.urls, r.RequestURI)
		f.mu.Unlock()
		w.Header().Set("Content-Security-Policy", csp)
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

// The secret page against a fake server: it shows the terminal's name
// and its prompt line, posts the token (from the fragment, never in a
// URL) with the secret, empties the field, and says "Sent"; a refused
// secret may be typed again; a gone prompt ends the page; each refusal
// of the link says why, not logged in with a link to the console.
func TestSecretPageAgainstFake(t *testing.T) {
	b := testkit.NewBrowser(t)
	f := newSecretFake(t)
	f.prompt = func() (int, string) {
		return http.StatusOK, `{"session":"s1","name":"deploy","line":"[sudo] password for ada:","reader":"sudo","expiresAt":"2030-01-01T00:00:00Z"}`
	}
	f.answers = []int{http.StatusBadRequest, http.StatusNoContent}
	b.Open(f.URL + "/secret/s1#token=tok-123")
	b.WaitJS(`window.ptySecret && ptySecret.state === "ready" && document.getElementById("name").textContent === "deploy" &&
		document.getElementById("line").textContent === "[sudo] password for ada:" && document.getElementById("status").textContent === "asked by sudo" &&
		document.getElementById("secret").type === "password" && document.activeElement === document.getElementById("secret")`, wait)
	b.Eval(`document.getElementById("secret").value = "first-try"; document.getElementById("submit").click()`, nil)
	b.WaitJS(`ptySecret.state === "ready" && ptySecret.code === "bad_secret" && !document.getElementById("form").hidden &&
		document.getElementById("message").textContent.includes("control character") && document.getElementById("secret").value === ""`, wait)
	b.Eval(`document.getElementById("secret").value = "s3cr3t"; document.getElementById("form").requestSubmit()`, nil)
	b.WaitJS(`ptySecret.state === "sent" && !document.getElementById("done").hidden && document.getElementById("done").textContent === "Sent. The terminal goes on." &&
		document.getElementById("form").hidden && document.getElementById("secret").value === ""`, wait)
	f.mu.Lock()
	bodies, urls := f.bodies, strings.Join(f.urls, "\n")
	f.mu.Unlock()
	if len(bodies) != 2 || bodies[1]["token"] != "tok-123" || bodies[1]["secret"] != "s3cr3t" || bodies[0]["secret"] != "first-try" {
		t.Fatalf("the page posted %v", bodies)
	}
	if strings.Contains(urls, "tok-123") || strings.Contains(urls, "s3cr3t") {
		t.Fatalf("a token or secret in a URL:\n%s", urls)
	}

	// A prompt that went away meanwhile ends the page.
	f.mu.Lock()
	f.answers = []int{http.StatusGone}
	f.mu.Unlock()
	b.Open("about:blank")
	b.Open(f.URL + "/secret/s1#token=tok-456")
	b.WaitJS(`ptySecret.state === "ready"`, wait)
	b.Eval(`document.getElementById("secret").value = "late"; document.getElementById("submit").click()`, nil)
	b.WaitJS(`ptySecret.state === "refused" && ptySecret.code === "secret_prompt_gone" && document.getElementById("form").hidden &&
		document.getElementById("message").textContent.includes("no longer waits")`, wait)

	for code, says := range map[string]string{
		"not_logged_in":    "Not logged in",
		"forbidden":        "not valid",
		"secret_link_used": "was used",
	} {
		status := map[string]int{"not_logged_in": 401, "forbidden": 403, "secret_link_used": 410}[code]
		f.mu.Lock()
		f.prompt = func() (int, string) { return status, `{"code":"` + code + `","message":"x"}` }
		f.mu.Unlock()
		b.Open("about:blank")
		b.Open(f.URL + "/secret/s1#token=tok-" + code)
		b.WaitJS(`ptySecret.state === "refused" && ptySecret.code === "`+code+`" && document.getElementById("form").hidden &&
			document.getElementById("message").textContent.includes("`+says+`")`, wait)
		if code == "not_logged_in" {
			b.WaitJS(`document.querySelector("#message a[href='/']") !== null`, wait)
		}
	}
	// No token at all: refused without asking.
	b.Open("about:blank")
	b.Open(f.URL + "/secret/s1")
	b.WaitJS(`ptySecret.state === "refused" && ptySecret.code === "forbidden"`, wait)
	for _, m := range b.Console() {
		if strings.Contains(m.Text, "Content Security Policy") {
			t.Errorf("the page broke the policy: %s", m.Text)
		}
	}
}
