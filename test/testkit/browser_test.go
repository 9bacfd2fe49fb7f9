package testkit

import (
	"image/color"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestBrowser opens a page, evaluates in it, waits for a change a timer
// makes, and takes a screenshot.
func TestBrowser(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<!doctype html><title>t</title><p id="p">before</p>
<script>setTimeout(() => { document.getElementById("p").textContent = "after"; }, 200);</script>`))
	}))
	defer srv.Close()

	b := NewBrowser(t)
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

// TestEmulate lays a page out on each of Screens, photographs a square of
// known colour in device pixels, and taps a button on the touch screens.
func TestEmulate(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<!doctype html><meta name="viewport" content="width=device-width, initial-scale=1"><title>t</title>
<body style="margin:0;background:#000"><div id="sq" style="position:absolute;left:10px;top:20px;width:30px;height:40px;background:#f00"></div>
<button id="b" style="position:absolute;left:100px;top:100px;width:80px;height:50px">b</button>
<script>window.taps = []; document.getElementById("b").addEventListener("click", () => taps.push("click"));
document.getElementById("b").addEventListener("touchstart", () => taps.push("touch"));</script>`))
	}))
	defer srv.Close()

	b := NewBrowser(t)
	for _, s := range BrowserScreens() {
		t.Run(s.String(), func(t *testing.T) {
			b.Emulate(s)
			b.Open(srv.URL)
			var m struct {
				Width, Height, DPR float64
				Touch              bool
			}
			b.Eval(`({ width: innerWidth, height: innerHeight, dpr: devicePixelRatio, touch: navigator.maxTouchPoints > 0 })`, &m)
			if m.Width != float64(s.Width) || m.Height != float64(s.Height) || m.DPR != s.DPR || m.Touch != s.Mobile {
				t.Fatalf("the page sees %+v, want %v", m, s)
			}
			img := b.Shoot(Rect{X: 0, Y: 0, Width: 50, Height: 70})
			if got, want := img.Bounds().Dx(), int(50*s.DPR); got != want {
				t.Errorf("the picture is %d px wide, want %d (device pixels)", got, want)
			}
			red := func(x, y float64) bool {
				r, g, bl, _ := img.At(int(x*s.DPR), int(y*s.DPR)).RGBA()
				return color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(bl >> 8), 255} == color.RGBA{255, 0, 0, 255}
			}
			if !red(11, 21) || !red(39, 59) || red(9, 21) || red(41, 61) {
				t.Error("the red square is not where the page put it, in the picture's device pixels")
			}
			if s.Mobile {
				b.Tap(140, 125)
				b.WaitJS(`taps.join() === "touch,click"`, 10*time.Second)
			}
		})
	}
}
