package browser_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/test/browser"
	"github.com/ptyactor/ptyactor/test/leakcheck"
)

func TestMain(m *testing.M) {
	os.Exit(leakcheck.Main(m, "PA_BROWSER_RUN", func(*leakcheck.Checker) {}))
}

// TestBrowser opens a page, evaluates in it, waits for a change a timer
// makes, and takes a screenshot.
func TestBrowser(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<!doctype html><title>t</title><p id="p">before</p>
<script>setTimeout(() => { document.getElementById("p").textContent = "after"; }, 200);</script>`))
	}))
	defer srv.Close()

	b := browser.New(t)
	b.Open(srv.URL)
	var title string
	b.Eval(`document.title`, &title)
	if title != "t" {
		t.Errorf("title %q, want t", title)
	}
	var sum int
	b.Eval(`Promise.resolve(1 + 2)`, &sum)
	if sum != 3 {
		t.Errorf("1 + 2 = %d through a promise", sum)
	}
	b.WaitJS(`document.getElementById("p").textContent === "after"`, 10*time.Second)
	shot := filepath.Join(t.TempDir(), "page.png")
	b.Screenshot(shot)
	if st, err := os.Stat(shot); err != nil || st.Size() == 0 {
		t.Errorf("screenshot: %v", err)
	}
}
