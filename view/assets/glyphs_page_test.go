package assets_test

import (
	"fmt"
	"image"
	"image/png"
	"math"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/ptyactor/ptyactor/test/testkit"
)

// glyphLine is a line of what a terminal clips first: underscores (drawn
// at the very bottom of a font's descent), descenders, a bar that spans
// the whole cell, box drawing, and a full-width character followed by an
// underscore (which must land two cells on).
const glyphLine = "__name__ a_b_c ____ gy|g │─┌┐└┘├┤┼ 漢_字_"

// viewCell is one cell of the terminal's screen as xterm's buffer (the
// emulator the page runs) holds it.
type viewCell struct {
	Row, Col, Width int
	Ch              string
}

// termGeometry is where the page drew the terminal: the screen element's
// box (after the view's scale), the part of it the stage shows, the
// session's size, and the page's device pixel ratio.
type termGeometry struct {
	Screen, Visible testkit.Rect
	Cols, Rows      int
	DPR, FontSize   float64
	Cells           []viewCell
}

// geometryJS reads the terminal's geometry and its screen's cells.
const geometryJS = `(() => {
	const t = ptyView.term, buf = t.buffer.active;
	const sr = document.querySelector(".xterm-screen").getBoundingClientRect();
	const st = document.getElementById("stage").getBoundingClientRect();
	const left = Math.max(sr.left, st.left), top = Math.max(sr.top, st.top);
	const right = Math.min(sr.right, st.right, innerWidth), bottom = Math.min(sr.bottom, st.bottom, innerHeight);
	const cells = [];
	for (let r = 0; r < t.rows; r++) {
		const line = buf.getLine(buf.viewportY + r);
		for (let c = 0; line && c < t.cols; c++) {
			const cell = line.getCell(c);
			if (cell.getWidth() === 0) continue;
			cells.push({ row: r, col: c, width: cell.getWidth(), ch: cell.getChars() || " " });
		}
	}
	return {
		screen: { x: sr.left, y: sr.top, width: sr.width, height: sr.height },
		visible: { x: left, y: top, width: right - left, height: bottom - top },
		cols: t.cols, rows: t.rows, dpr: devicePixelRatio, fontSize: t.options.fontSize, cells,
	};
})()`

// fittedJS is true when the view draws the terminal in the font its rule
// gives (view.js letterbox): the largest, in sixteenths of a pixel, at
// which the session fits the stage, 9 px at least, and xterm took that
// font: the terminal fills the stage as far as whole cells allow.
const fittedJS = `(() => {
	const t = ptyView.term, st = document.getElementById("stage"), sc = document.querySelector(".xterm-screen");
	const fs = t.options.fontSize, c = ptyView.cellAt(fs), up = ptyView.cellAt(fs + 1 / 16);
	const fits = (c) => Math.round(t.cols * c.width) <= st.clientWidth && t.rows * c.height <= st.clientHeight;
	return (fits(c) || fs === 9) && !fits(up) && t.options.lineHeight === c.lineHeight &&
		Math.abs(sc.offsetWidth - Math.round(t.cols * c.width)) <= 1 && Math.abs(sc.offsetHeight - t.rows * c.height) < 0.01;
})()`

// settledJS is true once the view is fitted (fittedJS) and the text is
// drawn, its last row holding last.
func settledJS(last string) string {
	return fittedJS + ` && (() => {
		const rows = [...document.querySelectorAll(".xterm-rows > div")];
		return rows.length === ptyView.term.rows && rows[rows.length - 1].textContent.includes(` + jsString(last) + `);
	})()`
}

func jsString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// nextFrame resolves after the browser drew two more frames: what the
// page laid out is on the screen a screenshot takes.
const nextFrame = `new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))`

// ink reports whether the box (x0, y0)–(x1, y1) of img, in device pixels,
// holds a pixel that is not the terminal's background (#101214) by more
// than a faint edge.
func ink(img image.Image, x0, y0, x1, y1 int) bool {
	b := img.Bounds()
	x0, y0, x1, y1 = max(x0, b.Min.X), max(y0, b.Min.Y), min(x1, b.Max.X), min(y1, b.Max.Y)
	for y := y0; y < y1; y++ {
		for x := x0; x < x1; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			d := max(absDiff(r>>8, 0x10), absDiff(g>>8, 0x12), absDiff(bl>>8, 0x14))
			if d > 40 {
				return true
			}
		}
	}
	return false
}

func absDiff(a, b uint32) uint32 {
	if a > b {
		return a - b
	}
	return b - a
}

// cjkFont reports whether fontconfig knows a font for Chinese (test/deps.sh
// installs fonts-wqy-microhei).
func cjkFont() bool {
	out, err := exec.Command("fc-list", ":lang=zh", "family").Output()
	return err == nil && strings.TrimSpace(string(out)) != ""
}

// TestGlyphsInBrowser draws a screen of glyphLine in the live view at
// every screen size and pixel ratio, at the sizes sessions have, and
// checks the pixels: every underscore has ink in the lower half of its
// cell, descenders and bars reach the cell's bottom quarter, every other
// glyph has ink, a space has none, and a full-width character inks both
// its cells. (vim's "__name__" showed as "  name  " at 1x: xterm's rows
// were shorter than the font, and clipped the underscores.)
func TestGlyphsInBrowser(t *testing.T) {
	f := newFake(t)
	b := testkit.NewBrowser(t)
	withCJK := cjkFont()
	if !withCJK && os.Getenv("CI") != "" {
		t.Fatal("no CJK font (fc-list :lang=zh): test/deps.sh installs fonts-wqy-microhei")
	}
	for _, screen := range testkit.BrowserScreens() {
		for _, size := range []struct{ cols, rows int }{{80, 24}, {132, 40}, {150, 40}, {200, 60}} {
			t.Run(fmt.Sprintf("%v/%dx%d", screen, size.cols, size.rows), func(t *testing.T) {
				b.Emulate(screen)
				b.Open(f.URL + "/s/s1")
				c := f.next()
				c.send(t, `{"t":"hello","id":"s1","name":"glyphs","label":"glyphs","readOnly":true}`)
				lines := make([]string, size.rows)
				for i := range lines {
					lines[i] = glyphLine
				}
				lines[len(lines)-1] = strings.TrimSuffix(glyphLine, "_") + "!"
				c.sendJSON(t, map[string]any{"t": "picture", "seq": 1, "rows": size.rows, "cols": size.cols,
					"data": strings.Join(lines, "\r\n")})
				b.WaitJS(settledJS("字!"), wait)
				var font bool
				b.Eval(`document.fonts.check('14px "DejaVu Sans Mono"')`, &font)
				if !font {
					t.Log("DejaVu Sans Mono is not installed: the terminal draws in a fallback font")
				}
				b.Eval(nextFrame, nil)
				var g termGeometry
				b.Eval(geometryJS, &g)
				if g.Cols != size.cols || g.Rows != size.rows || g.DPR != screen.DPR {
					t.Fatalf("the terminal is %dx%d at %gx, want %dx%d at %gx", g.Cols, g.Rows, g.DPR, size.cols, size.rows, screen.DPR)
				}
				if g.FontSize < 9 {
					t.Errorf("the terminal's text is %.2f px, under the 9 px floor", g.FontSize)
				}
				checkGlyphs(t, b.Shoot(g.Visible), g, withCJK)
			})
		}
	}
	withinCSP(t, b)
}

// checkGlyphs holds the picture img of the visible part of the terminal
// to the cells of its screen.
func checkGlyphs(t *testing.T, img image.Image, g termGeometry, withCJK bool) {
	t.Helper()
	cw, ch := g.Screen.Width/float64(g.Cols), g.Screen.Height/float64(g.Rows)
	checked := map[string]int{}
	var missing []string
	for _, c := range g.Cells {
		// The cell's box in the picture's device pixels, rounded inward.
		left := g.Screen.X + float64(c.Col)*cw - g.Visible.X
		top := g.Screen.Y + float64(c.Row)*ch - g.Visible.Y
		right := left + float64(c.Width)*cw
		bottom := top + ch
		if left < 0 || top < 0 || right > g.Visible.Width+0.01 || bottom > g.Visible.Height+0.01 {
			continue // scrolled out of the stage
		}
		// has looks for ink in the part [from, to) of the cell's height
		// and [fx, tx) of its width, taking in a device pixel the cell's
		// edge crosses (the text's baseline snaps to the device's pixels);
		// blank looks only at the pixels wholly inside that part.
		dev := func(v float64) float64 { return v * g.DPR }
		part := func(from, to float64) (float64, float64) {
			return dev(top + from*(bottom-top)), dev(top + to*(bottom-top))
		}
		has := func(from, to, fx, tx float64) bool {
			y0, y1 := part(from, to)
			x0, x1 := dev(left+fx*(right-left)), dev(left+tx*(right-left))
			return ink(img, int(math.Floor(x0)), int(math.Floor(y0)), int(math.Ceil(x1)), int(math.Ceil(y1)))
		}
		blank := func(from, to float64) bool {
			y0, y1 := part(from, to)
			// A glyph that spans its cell (_, ─) may shade a device pixel
			// of its neighbour's.
			return !ink(img, int(math.Ceil(dev(left)))+1, int(math.Ceil(y0)), int(math.Floor(dev(right)))-1, int(math.Floor(y1)))
		}
		where := fmt.Sprintf("%q at row %d col %d", c.Ch, c.Row, c.Col)
		switch c.Ch {
		case " ":
			if !blank(0, 1) {
				missing = append(missing, where+": ink in a space")
			}
		case "_":
			if !has(0.5, 1, 0, 1) {
				missing = append(missing, where+": no ink in the lower half (clipped)")
			}
			if !blank(0, 0.5) {
				missing = append(missing, where+": ink in the upper half")
			}
		case "g", "y", "|", "│":
			if !has(0.75, 1, 0, 1) {
				missing = append(missing, where+": no ink in the bottom quarter (clipped)")
			}
			if c.Ch == "│" && !has(0, 0.25, 0, 1) {
				missing = append(missing, where+": no ink in the top quarter")
			}
		case "漢", "字":
			if !withCJK {
				continue
			}
			if !has(0, 1, 0, 0.5) || !has(0, 1, 0.5, 1) {
				missing = append(missing, where+": a full-width glyph that does not ink both its cells")
			}
		default:
			if !has(0, 1, 0, 1) {
				missing = append(missing, where+": no ink")
			}
		}
		checked[c.Ch]++
	}
	for _, want := range []string{"_", "g", "y", "|", "│", "─", "┼", " "} {
		if checked[want] == 0 {
			t.Errorf("no %q cell was on the screen to check", want)
		}
	}
	if len(missing) > 0 {
		if len(missing) > 20 {
			missing = append(missing[:20], fmt.Sprintf("… and %d more", len(missing)-20))
		}
		// The picture is kept (outside the test's folder, which goes) to
		// be looked at.
		p := savePNG(t, img)
		t.Errorf("font %.2f px, cell %.3fx%.3f css px at %gx; the picture (%s) shows:\n  %s",
			g.FontSize, cw, ch, g.DPR, p, strings.Join(missing, "\n  "))
	}
}

// savePNG writes img to a new file in the system's temporary folder and
// returns its path.
func savePNG(t *testing.T, img image.Image) string {
	t.Helper()
	fh, err := os.CreateTemp("", "ptyactor-glyphs-*.png")
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	if err := png.Encode(fh, img); err != nil {
		t.Fatal(err)
	}
	return fh.Name()
}
