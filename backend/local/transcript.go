package local

import (
	"strings"

	"github.com/ptyactor/ptyactor/backend/local/scrollback"
	"github.com/ptyactor/ptyactor/vt"
	"github.com/ptyactor/ptyactor/messages"
)

// The transcript is what the terminal showed, as `tmux capture-pane -p -J
// -S -` shows it: the emulator's history (final lines, which never
// change) and then its visible lines (the tail, which may). Carriage
// returns and backspaces overwrite there, erases and cursor moves apply,
// wrapped rows are one line. Scrollback pages, cursor reads and a send's
// output all read it; the lines are numbered as a cursor counts them
// (final lines from the session's first), the tail's following the last
// final one.
//
// A send's output starts on the line the cursor was on when it began,
// without what stood before the cursor there (the prompt): `echo hi`
// reads "echo hi\nhi\n$ ". TakeOutput hands out each line above the
// cursor's once; EndSend returns the lines not handed out, with the tail,
// in their state then, so a progress line redrawn in place reads as its
// last state.

// view returns the transcript now, within the scrollback bounds, and the
// number of the line the cursor is on.
func (s *session) view() (scrollback.View, int64) {
	next := s.screen.FinalLines()
	tail, _ := s.screen.TailFrom(0)
	index := s.padCursorLine(tail, 0)
	return scrollback.NewView(s.screen, tail, s.cfg.ScrollbackLines, s.cfg.ScrollbackMaxBytes), next + int64(index)
}

// sendView is view for the send's output from line from on: the screen's
// lines above it are not read (a send's output is usually the last few
// lines of a full screen).
func (s *session) sendView(from int64) (scrollback.View, int64) {
	next := s.screen.FinalLines()
	k := int(max(min(from-next, int64(vt.MaxRows)), 0))
	tail, n := s.screen.TailFrom(k)
	if k >= n && n > 0 {
		// Past the end (the lines shrank since): the last line.
		k = n - 1
		tail, _ = s.screen.TailFrom(k)
	}
	index := s.padCursorLine(tail, k)
	return scrollback.NewTailView(s.screen, tail, k, n), next + int64(index)
}

// padCursorLine keeps the blanks up to the cursor on the tail's last line
// when the cursor is on it: a prompt reads "$ ", as it was printed, not
// "$". tail holds the tail's lines from index from on. It returns the
// index of the cursor's line in the tail.
func (s *session) padCursorLine(tail []string, from int) int {
	index, before := s.screen.CursorLine()
	if k := index - from; k == len(tail)-1 && k >= 0 && len(before) > len(tail[k]) && strings.HasPrefix(before, tail[k]) {
		tail[k] = before
	}
	return index
}

// collect starts the send's output where the cursor stands now.
func (s *session) collect() {
	index, before := s.screen.CursorLine()
	s.send.from = s.screen.FinalLines() + int64(index)
	s.send.before, s.send.taken = before, s.send.from
	s.send.collecting = true
}

// sendLine is line i of the send's output: the first one without the text
// that stood before the cursor when the send began (or empty, when the
// line still is no more than that text, trimmed).
func (s *session) sendLine(i int64, line string) string {
	if i != s.send.from {
		return line
	}
	if rest, ok := strings.CutPrefix(line, s.send.before); ok {
		return rest
	}
	if strings.HasPrefix(s.send.before, line) {
		return ""
	}
	return line // redrawn since: all of it is the send's
}

// takeOutput hands out the send's lines above the cursor's line not handed
// out before, each ended by '\n', the newest MaxReadBytes of them.
func (s *session) takeOutput() messages.SendRead {
	v, at := s.sendView(s.send.taken)
	lo, dropped := s.send.taken, false
	if lo < v.First() {
		lo, dropped = v.First(), true
	}
	if at <= lo {
		s.send.taken = max(s.send.taken, lo)
		return messages.SendRead{Truncated: dropped}
	}
	// Line at (the cursor's) reads as "" here: the text ends with '\n'.
	text, _, cut := v.Newest(lo, at+1, s.cfg.MaxReadBytes, func(i int64, l string) string {
		if i == at {
			return ""
		}
		return s.sendLine(i, l)
	})
	s.send.taken = at
	return messages.SendRead{Delta: text, Truncated: dropped || cut}
}

// endOutput returns the rest of the send's output: the lines not handed
// out, the tail included, the newest MaxReadBytes of them, and the final
// lines it leaves out.
func (s *session) endOutput() messages.SendRead {
	v, _ := s.sendView(s.send.taken)
	from := s.send.taken
	lo, dropped := from, false
	if lo < v.First() {
		lo, dropped = v.First(), true
	}
	end := v.End()
	if lo >= end {
		// The lines handed out are all there is (a redraw or a resize
		// made fewer): the line the cursor is on, again.
		lo = max(end-1, v.First())
	}
	text, shown, cut := v.Newest(lo, end, s.cfg.MaxReadBytes, s.sendLine)
	r := messages.SendRead{Delta: text, Truncated: dropped || cut, Cursor: uint64(v.Final())}
	if to := min(shown, v.Final()); r.Truncated && to > from {
		r.OmittedFrom, r.OmittedTo = uint64(from), uint64(to)
	}
	return r
}

// PeekOutput implements backend.OutputPeeker: what EndSend would return
// now, without ending or taking anything.
func (s *session) PeekOutput() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.endOutput().Delta
}

func (s *session) ReadSince(cursor uint64) (messages.ReadResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, _ := s.view()
	return v.Since(cursor, s.cfg.MaxReadBytes), nil
}

func (s *session) Read(offset, count int) (messages.ReadResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, _ := s.view()
	return v.Page(offset, count, s.cfg.MaxReadBytes), nil
}
