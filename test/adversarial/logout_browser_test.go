package adversarial

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/ptyactor/ptyactor/test/testkit"
)

// The console's Log out, in Debian's chromium: the operator logs in with
// the console URL (the bearer token in its fragment), clicks Log out, and
// the page says it is logged out; the cookie the browser held is dead on
// the server too (replayed from Go, it is refused), and the live view
// open with it in another tab is closed.
func TestLogoutButtonInBrowser(t *testing.T) {
	s := Start(t, Options{})
	c := s.MCP()
	id := c.Open()
	b := testkit.NewBrowser(t)
	b.Open(s.URL("/#token=" + s.Token))
	b.WaitJS(`document.body.innerText.includes(`+strconv.Quote(id)+`)`, 20*time.Second)

	got, err := chromedp.Call(b.Context(), network.GetCookies, network.GetCookiesParams{URLs: []string{s.Base}})
	if err != nil {
		t.Fatal(err)
	}
	cookies := got.Cookies
	var held *http.Cookie
	for _, ck := range cookies {
		if ck.Name == "ptyactor_console" {
			held = &http.Cookie{Name: ck.Name, Value: ck.Value}
			if !ck.HTTPOnly || ck.SameSite != network.CookieSameSiteStrict {
				t.Fatalf("the browser's cookie: HttpOnly %v, SameSite %q", ck.HTTPOnly, ck.SameSite)
			}
		}
	}
	if held == nil {
		t.Fatalf("no login cookie in the browser: %v", cookies)
	}
	v, err := s.Watch(ctx(t), id, "", DialOptions{Cookie: held})
	if err != nil {
		t.Fatal(err)
	}
	_, done := v.Drain(ctx(t))

	b.Eval(`document.getElementById("logout").click()`, nil)
	b.WaitJS(`document.getElementById("message").textContent.includes("Not logged in")`, 10*time.Second)
	closedWithin(t, done, time.Now(), "logged out")
	if r := s.Do(http.MethodGet, "/api/sessions", nil, "Cookie", CookieHeader(held)); r.Status != http.StatusUnauthorized {
		t.Fatalf("the browser's cookie after Log out: HTTP %d", r.Status)
	}
}
