package testkit

// The browser fixture drives a real headless chromium from Go tests over
// the DevTools protocol (chromedp), for the pages of view/assets:
// NewBrowser starts one browser for a test, and its cleanup closes it and
// proves that no chromium process outlived the test.
//
// Without chromium the test skips, unless CI is set: then it fails
// (test/deps.sh installs the Debian package).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// Bounds on the browser's steps; a test that needs longer waits says so in
// WaitJS.
const (
	startTimeout = 60 * time.Second
	stepTimeout  = 20 * time.Second
	closeTimeout = 10 * time.Second
	exitGrace    = 5 * time.Second
)

// Browser is one headless chromium with one tab, owned by one test.
type Browser struct {
	t   testing.TB
	ctx context.Context // the tab
	dir string          // the user data directory, unique to this browser

	mu       sync.Mutex
	console  []chromedp.ConsoleMessage
	output   bytes.Buffer // chromium's stdout and stderr
	readDone chan struct{}
}

// ChromiumPath finds the chromium binary: chromium, then chromium-browser.
func ChromiumPath() (string, error) {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no chromium or chromium-browser in PATH")
}

// NewBrowser starts a headless chromium for t (new headless mode, a fresh user
// data directory, --no-sandbox when running as root) with a 1200×800
// window. Its cleanup closes the browser, waits for it, and fails t if a
// chromium process of it is still alive after a short grace, or if the
// page threw an exception nothing caught.
func NewBrowser(t testing.TB) *Browser {
	t.Helper()
	path, err := ChromiumPath()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("chromium is required in CI: %v (test/deps.sh installs it)", err)
		}
		t.Skipf("skipping: %v (source test/deps.sh, or apt-get install chromium)", err)
	}
	b := &Browser{t: t, dir: t.TempDir(), readDone: make(chan struct{})}

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.Flag("headless", "new"),
		chromedp.UserDataDir(b.dir),
		chromedp.WindowSize(1200, 800),
		chromedp.CombinedOutput(lockedWriter{b}),
	)
	if os.Geteuid() == 0 {
		// Chromium's sandbox refuses to run as root (CI containers do).
		opts = append(opts, chromedp.NoSandbox)
	}
	allocCtx, allocCancel := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	b.ctx = ctx

	// The first Run starts the browser; it must not carry a deadline (that
	// would end the browser with it), so a timer cancels a start that hangs.
	watchdog := time.AfterFunc(startTimeout, cancel)
	err = chromedp.Do(ctx)
	watchdog.Stop()
	if err == nil {
		messages := chromedp.Console(ctx)
		go func() {
			defer close(b.readDone)
			for m, err := range messages {
				if err != nil {
					return
				}
				b.mu.Lock()
				b.console = append(b.console, m)
				b.mu.Unlock()
			}
		}()
	} else {
		close(b.readDone)
	}
	t.Cleanup(func() { b.close(cancel, allocCancel) })
	if err != nil {
		t.Fatalf("start chromium (%s): %v\n%s", path, err, b.Output())
	}
	return b
}

// close ends the browser gracefully (then by force), waits for its
// process, and checks that none of its processes is left.
func (b *Browser) close(cancel, allocCancel context.CancelFunc) {
	t := b.t
	tctx, tcancel := context.WithTimeout(b.ctx, closeTimeout)
	if err := chromedp.Cancel(tctx); err != nil && !errors.Is(err, context.Canceled) {
		t.Logf("close chromium: %v", err)
	}
	tcancel()
	cancel()
	allocCancel() // kills chromium if it is still running, and waits for it
	<-b.readDone

	if left := b.leftovers(exitGrace); len(left) > 0 {
		t.Errorf("chromium processes outlived the test (killed now): %v", left)
		for _, pid := range left {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	var thrown []string
	for _, m := range b.Console() {
		if m.IsException() {
			thrown = append(thrown, m.Text)
		}
	}
	if len(thrown) > 0 {
		t.Errorf("the page threw: %s", strings.Join(thrown, "\n  "))
	}
	if t.Failed() {
		t.Logf("browser console:\n%s", b.consoleText())
	}
}

// leftovers waits up to grace for every process started with this
// browser's user data directory to end (chromium passes it to each of its
// children), and returns the pids still alive then. Without /proc (macOS)
// it finds none.
func (b *Browser) leftovers(grace time.Duration) []int {
	want := []byte("--user-data-dir=" + b.dir)
	deadline := time.Now().Add(grace)
	for {
		var pids []int
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
			if err != nil {
				continue
			}
			for _, arg := range bytes.Split(cmdline, []byte{0}) {
				if bytes.Equal(arg, want) {
					pids = append(pids, pid)
					break
				}
			}
		}
		if len(pids) == 0 || time.Now().After(deadline) {
			return pids
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Context is the tab's chromedp context, for actions the helpers lack.
func (b *Browser) Context() context.Context { return b.ctx }

// Open navigates the tab to url and waits for its load event.
func (b *Browser) Open(url string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		b.t.Fatalf("open %s: %v\nconsole:\n%s", url, err, b.consoleText())
	}
}

// Eval evaluates the JavaScript expression js in the page (awaiting it if
// it is a promise) and decodes its JSON value into out (nil: ignore it).
func (b *Browser) Eval(js string, out any) {
	b.t.Helper()
	raw, err := b.eval(js, stepTimeout)
	if err != nil {
		b.t.Fatalf("eval %s: %v\nconsole:\n%s", js, err, b.consoleText())
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			b.t.Fatalf("eval %s: decode %s: %v", js, raw, err)
		}
	}
}

func (b *Browser) eval(js string, timeout time.Duration) ([]byte, error) {
	ctx, cancel := context.WithTimeout(b.ctx, timeout)
	defer cancel()
	return chromedp.Run(ctx, chromedp.Evaluate[[]byte](js, chromedp.EvalAwaitPromise))
}

// WaitJS polls the JavaScript expression cond until it is truthy, and
// fails the test if it is not within timeout. An expression that throws
// counts as false (the element may not exist yet).
func (b *Browser) WaitJS(cond string, timeout time.Duration) {
	b.t.Helper()
	expr := "Boolean(" + cond + ")"
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	var last string
	for {
		raw, err := b.eval(expr, min(stepTimeout, max(time.Until(deadline), 100*time.Millisecond)))
		if err == nil && string(raw) == "true" {
			return
		}
		if err != nil {
			last = err.Error()
		} else {
			last = string(raw)
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("waited %v for %s (last: %s)\nconsole:\n%s", timeout, cond, last, b.consoleText())
		}
		<-tick.C
	}
}

// Screenshot saves a PNG of the tab's viewport at path.
func (b *Browser) Screenshot(path string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.t.Fatalf("screenshot: %v", err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// BrowserScreen is a viewport a test lays a page out in: its size in CSS pixels,
// its device pixel ratio, and whether it is a phone or tablet (Mobile: the
// page's viewport meta tag applies, and touch events are on).
type BrowserScreen struct {
	Name          string // for file and subtest names: "phone", "desktop"
	Width, Height int64
	DPR           float64
	Mobile        bool
}

// BrowserScreens are the sizes a page is held to: a desktop at 1280x800, a
// tablet at 768x1024 and a phone at 390x844, each at device pixel ratio
// 1 and 2.
func BrowserScreens() []BrowserScreen {
	var out []BrowserScreen
	for _, s := range []BrowserScreen{
		{Name: "desktop", Width: 1280, Height: 800},
		{Name: "tablet", Width: 768, Height: 1024, Mobile: true},
		{Name: "phone", Width: 390, Height: 844, Mobile: true},
	} {
		for _, dpr := range []float64{1, 2} {
			s.DPR = dpr
			out = append(out, s)
		}
	}
	return out
}

// String names s for a subtest: "phone-390x844@2x".
func (s BrowserScreen) String() string {
	return fmt.Sprintf("%s-%dx%d@%gx", s.Name, s.Width, s.Height, s.DPR)
}

// Emulate lays the tab out on s from now on (a page already open is laid
// out again).
func (b *Browser) Emulate(s BrowserScreen) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	orientation := &emulation.ScreenOrientation{Type: emulation.ScreenOrientationTypeLandscapePrimary, Angle: 90}
	if s.Height > s.Width {
		orientation = &emulation.ScreenOrientation{Type: emulation.ScreenOrientationTypePortraitPrimary}
	}
	err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		if _, err := cdp.Call(ctx, t, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
			Width: s.Width, Height: s.Height, DeviceScaleFactor: s.DPR, Mobile: s.Mobile,
			ScreenWidth: s.Width, ScreenHeight: s.Height, ScreenOrientation: orientation,
		}); err != nil {
			return err
		}
		_, err := cdp.Call(ctx, t, emulation.SetTouchEmulationEnabled, emulation.SetTouchEmulationEnabledParams{Enabled: s.Mobile, MaxTouchPoints: 5})
		return err
	}))
	if err != nil {
		b.t.Fatalf("emulate %v: %v", s, err)
	}
}

// Rect is a rectangle in the page's CSS pixels (getBoundingClientRect's).
type Rect struct{ X, Y, Width, Height float64 }

// Shoot takes a picture of the part r of the viewport, in device pixels (at
// device pixel ratio 2, twice r's size), and decodes it.
func (b *Browser) Shoot(r Rect) image.Image {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	data, err := chromedp.Run(ctx, chromedp.Action[[]byte](func(ctx context.Context, t *chromedp.Target) ([]byte, error) {
		res, err := cdp.Call(ctx, t, page.CaptureScreenshot, page.CaptureScreenshotParams{
			Format:      page.CaptureScreenshotFormatPng,
			FromSurface: ptr(true),
			Clip:        &page.Viewport{X: r.X, Y: r.Y, Width: r.Width, Height: r.Height, Scale: 1},
		})
		if err != nil {
			return nil, err
		}
		return res.Data, nil
	}))
	if err != nil {
		b.t.Fatalf("screenshot of %+v: %v", r, err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		b.t.Fatalf("screenshot of %+v: decode: %v", r, err)
	}
	return img
}

// Tap touches the viewport at (x, y), in CSS pixels, and lifts the finger:
// a tap, as a phone's touch screen gives it (the page gets touch events,
// then the click a tap makes). It needs a BrowserScreen with Mobile set.
func (b *Browser) Tap(x, y float64) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		if _, err := cdp.Call(ctx, t, input.DispatchTouchEvent, input.DispatchTouchEventParams{
			Type: input.DispatchTouchEventTypeTouchStart, TouchPoints: []*input.TouchPoint{{X: x, Y: y}},
		}); err != nil {
			return err
		}
		_, err := cdp.Call(ctx, t, input.DispatchTouchEvent, input.DispatchTouchEventParams{
			Type: input.DispatchTouchEventTypeTouchEnd, TouchPoints: []*input.TouchPoint{},
		})
		return err
	}))
	if err != nil {
		b.t.Fatalf("tap at %v,%v: %v", x, y, err)
	}
}

// InsertText types text into whatever has the page's focus, as a phone's
// on-screen keyboard commits it (one input event, no key events).
func (b *Browser) InsertText(text string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, input.InsertText, input.InsertTextParams{Text: text})
		return err
	}))
	if err != nil {
		b.t.Fatalf("insert text: %v", err)
	}
}

func ptr[T any](v T) *T { return &v }

// Console returns what the page wrote to its console so far, with the
// exceptions nothing caught.
func (b *Browser) Console() []chromedp.ConsoleMessage {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]chromedp.ConsoleMessage(nil), b.console...)
}

func (b *Browser) consoleText() string {
	var s strings.Builder
	for _, m := range b.Console() {
		fmt.Fprintf(&s, "  %s\n", m)
	}
	return s.String()
}

// Output returns what chromium wrote to its stdout and stderr so far.
func (b *Browser) Output() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.output.String()
}

// lockedWriter lets chromium's output reader append under b.mu.
type lockedWriter struct{ b *Browser }

func (w lockedWriter) Write(p []byte) (int, error) {
	w.b.mu.Lock()
	defer w.b.mu.Unlock()
	return w.b.output.Write(p)
}
