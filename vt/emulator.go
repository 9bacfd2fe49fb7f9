package vt

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// Size bounds. A wide character needs two columns; the upper bounds keep a
// screen within a few MiB however the size is asked for.
const (
	MinRows = 1
	MinCols = 2
	MaxRows = 500
	MaxCols = 1000
)

// Default history bounds, used when Options leaves them at zero.
const (
	DefaultHistoryLines = 10000
	DefaultHistoryBytes = 1 << 20
)

// ErrSize is the sentinel every size error matches.
var ErrSize = errors.New("vt: terminal size out of range")

// SizeError reports a size outside [MinRows, MaxRows] × [MinCols, MaxCols].
type SizeError struct {
	Rows, Cols int
}

func (e *SizeError) Error() string {
	return fmt.Sprintf("vt: terminal size %dx%d out of range (rows %d–%d, cols %d–%d)",
		e.Rows, e.Cols, MinRows, MaxRows, MinCols, MaxCols)
}

// Unwrap returns ErrSize.
func (e *SizeError) Unwrap() error { return ErrSize }

func checkSize(rows, cols int) error {
	if rows < MinRows || rows > MaxRows || cols < MinCols || cols > MaxCols {
		return &SizeError{Rows: rows, Cols: cols}
	}
	return nil
}

// Options configures an Emulator. The zero value is usable: default history
// bounds and no replies.
type Options struct {
	// HistoryLines bounds the final lines kept; older ones are dropped.
	// Zero or less means DefaultHistoryLines.
	HistoryLines int
	// HistoryBytes bounds the bytes of the final lines kept; older lines are
	// dropped, and one logical line longer than this is split into final
	// lines of at most this many bytes. Zero or less means
	// DefaultHistoryBytes.
	HistoryBytes int
	// Reply receives the terminal's answers to queries (device attributes,
	// cursor position and status reports, mode and colour queries), each a
	// complete sequence, in the order the queries arrived. It is called from
	// Feed, and the slice is valid only during the call. It must not block:
	// Feed runs on the output pump, and a program that waits for its answer
	// writes nothing more until it gets one. Queue the bytes and write them
	// to the terminal through the session's one write path, ordered with the
	// caller's input. Nil means queries go unanswered.
	Reply func(p []byte)
	// OSC receives the payload of every complete OSC sequence of at most
	// MaxOSCPayload bytes: the bytes between ESC ] and its BEL or ESC \,
	// without the C0 controls a terminal ignores inside it. It returns
	// whether Text should receive what is printed next. It is called
	// from Feed, in stream order with Reply and Text, and the slice is
	// valid only during the call and must not be modified. Nil means no
	// OSC is reported.
	OSC func(payload []byte) (watch bool)
	// Text receives, after OSC asked for it and until it returns false,
	// what the program prints: printable characters as valid UTF-8
	// (malformed input as U+FFFD; one run may arrive in several calls),
	// and each C0 control the terminal executes (LF, CR, BS, TAB, ...)
	// as a call of that one byte. Escape sequences are not reported. It
	// is called from Feed and must not block; the slice is valid only
	// during the call. While nobody watches, Feed does not call it at
	// all, so a flood of output costs nothing here.
	Text func(b []byte) (watch bool)
}

// Emulator is a terminal: it applies a program's output to a screen and
// keeps the history of lines that scrolled off. It is not safe for
// concurrent use; the session that owns it serializes access.
type Emulator struct {
	rows, cols int

	main screen
	alt  *screen // the alternate screen while it is in use, else nil
	scr  *screen // the active screen

	// The cursor. x == cols is the pending-wrap position after a character
	// was written in the last column: the next character wraps.
	x, y     int
	top, bot int // the scroll region, inclusive
	altFrom  int // the cursor row on the main screen when the alternate one was entered
	g        [2]charset
	gl       int    // the charset invoked into GL by SI (0) or SO (1)
	last     byte   // the ASCII character just printed, for REP; 0 after anything else
	saved    cursor // DECSC
	altSaved cursor // saved by mode 1049

	modes mode
	tabs  []bool // nil: a stop every 8 columns
	shape uint8  // the cursor style DECSCUSR set (0: the terminal's default)

	pens  *penTable // nil until a program sets a pen
	pen   pen       // the current pen
	penIx uint16    // its index in pens
	bgIx  uint16    // the index of the pen erased cells get (pen.go)

	hist  history
	reply func([]byte)

	onOSC  func([]byte) bool
	onText func([]byte) bool
	watch  bool // onText wants what is printed (observe.go)

	parser
	rbuf  []byte // reply scratch
	tbuf  []byte // row text scratch
	spare []line // rows moveLines reuses
}

// New returns an emulator of rows × cols with an empty screen and history.
func New(rows, cols int, opts Options) (*Emulator, error) {
	if err := checkSize(rows, cols); err != nil {
		return nil, err
	}
	e := &Emulator{
		rows:   rows,
		cols:   cols,
		reply:  opts.Reply,
		onOSC:  opts.OSC,
		onText: opts.Text,
	}
	e.hist.init(opts.HistoryLines, opts.HistoryBytes)
	e.main.lines = make([]line, rows)
	e.scr = &e.main
	e.resetModes()
	return e, nil
}

// Feed applies the next chunk of the program's output. It never blocks, and
// the result does not depend on how the stream was cut into chunks: a chunk
// may end inside an escape sequence or a UTF-8 character.
func (e *Emulator) Feed(p []byte) {
	i := 0
	if e.nc > 0 {
		i = e.resume(p)
		if e.nc > 0 {
			return
		}
	}
	for i < len(p) {
		if e.st == stGround {
			i = e.ground(p, i)
		} else {
			i = e.sequence(p, i)
		}
	}
}

// Modes reports the modes a program set: those that decide how keys,
// pasted text and the mouse must be encoded for it, and those that decide
// how what it prints next is drawn. The zero Modes is a new terminal's.
type Modes struct {
	// AppCursor is DECCKM: arrow keys send ESC O A rather than ESC [ A.
	AppCursor bool
	// AppKeypad is DECKPAM: the keypad sends application sequences.
	AppKeypad bool
	// BracketedPaste is mode 2004: pasted text goes between ESC [ 200 ~
	// and ESC [ 201 ~.
	BracketedPaste bool
	// Mouse is the mouse tracking mode: 0 (none), 9 (X10), 1000 (button
	// presses), 1002 (and drags) or 1003 (all motion).
	Mouse int
	// MouseEncoding is how mouse reports are encoded: 0 (X10 bytes), 1005
	// (UTF-8), 1006 (SGR) or 1015 (urxvt).
	MouseEncoding int
	// FocusEvents is mode 1004: focus changes send ESC [ I and ESC [ O.
	FocusEvents bool
	// CursorHidden is DECTCEM (mode 25) reset.
	CursorHidden bool
	// CursorBlink is mode 12.
	CursorBlink bool
	// CursorStyle is the last DECSCUSR (CSI n SP q): 0 the terminal's
	// default, 1–2 block, 3–4 underline, 5–6 bar (odd ones blink).
	CursorStyle int
	// Origin is DECOM (mode 6): cursor positions count from the scroll
	// region's top.
	Origin bool
	// NoAutowrap is DECAWM (mode 7) reset: a character printed in the
	// last column stays there instead of wrapping.
	NoAutowrap bool
	// Insert is IRM (mode 4): printed characters push the rest right.
	Insert bool
	// NewLine is LNM (mode 20): a line feed also returns the carriage.
	NewLine bool
	// ReverseVideo is DECSCNM (mode 5).
	ReverseVideo bool
	// AltScroll is mode 1007: the wheel sends arrow keys on the alternate
	// screen.
	AltScroll bool
}

// Modes returns the current modes.
func (e *Emulator) Modes() Modes {
	return Modes{
		AppCursor:      e.modes&modeAppCursor != 0,
		AppKeypad:      e.modes&modeAppKeypad != 0,
		BracketedPaste: e.modes&modeBracketedPaste != 0,
		Mouse:          modeNumber(e.modes & mouseTracking),
		MouseEncoding:  modeNumber(e.modes & mouseEncoding),
		FocusEvents:    e.modes&modeFocus != 0,
		CursorHidden:   e.modes&modeCursorVisible == 0,
		CursorBlink:    e.modes&modeBlink != 0,
		CursorStyle:    int(e.shape),
		Origin:         e.modes&modeOrigin != 0,
		NoAutowrap:     e.modes&modeAutowrap == 0,
		Insert:         e.modes&modeInsert != 0,
		NewLine:        e.modes&modeLNM != 0,
		ReverseVideo:   e.modes&modeReverse != 0,
		AltScroll:      e.modes&modeAltScroll != 0,
	}
}

// modeNumber returns the DEC private mode number of m, one mode; 0 for none.
func modeNumber(m mode) int {
	for n, pm := range privateModes {
		if pm == m && m != 0 {
			return n
		}
	}
	return 0
}

// AltScreen reports whether a program uses the alternate screen now (a
// full-screen program), without building a Screen.
func (e *Emulator) AltScreen() bool { return e.alt != nil }

// Size returns the current size.
func (e *Emulator) Size() Size { return Size{Rows: e.rows, Cols: e.cols} }

// Size is a terminal size in character cells.
type Size struct {
	Rows, Cols int
}

// resume completes the character carried over from the previous chunk, as
// a whole chunk would. It returns how many bytes of p it consumed; e.nc stays
// non-zero only when p was too short to decide.
func (e *Emulator) resume(p []byte) int {
	var join [2 * utf8.UTFMax]byte
	n := copy(join[:], e.carry[:e.nc])
	k := copy(join[n:n+utf8.UTFMax], p)
	buf := join[:n+k]
	carried := n
	for carried > 0 {
		if !utf8.FullRune(buf) {
			e.nc = copy(e.carry[:], buf)
			return len(p)
		}
		r, size := utf8.DecodeRune(buf)
		if size > carried {
			e.nc = 0
			e.print(r)
			if e.watch {
				e.observeRune(r)
			}
			return size - carried
		}
		e.print(r) // U+FFFD for a rejected byte
		if e.watch {
			e.observeRune(r)
		}
		buf, carried = buf[size:], carried-size
	}
	e.nc = 0
	return 0
}
