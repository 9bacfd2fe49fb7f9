package local

import (
	"strings"

	"github.com/ptyactor/ptyactor/backend/local/scrollback"
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

// view returns the transcript now and the number of the line the cursor is
// on. The tail's last line keeps its blanks up to the cursor when the
// cursor is on it: a prompt reads "$ ", as it was printed, not "$".
func (s *session) view() (scrollback.View, int64) {
	next := s.screen.FinalLines()
	tail := s.screen.Transcript(next).Tail
	index, before := s.screen.CursorLine()
	if last := len(tail) - 1; index == last && len(before) > len(tail[last]) && strings.HasPrefix(before, tail[last]) {
		tail[last] = before
	}
	return scrollback.NewView(s.screen, tail, s.cfg.ScrollbackLines, s.cfg.ScrollbackMaxBytes), next + int64(index)
}

// collect starts the send's output where the cursor stands now.
func (s *session) collect() {
	index, before := s.screen.CursorLine()
	s.sendFrom = s.screen.FinalLines() + int64(index)
	s.sendBefore, s.taken = before, s.sendFrom
	s.collecting = true
}

// sendLine is line i of the send's output: the first one without the text
// that stood before the cursor when the send began (or empty, when the
// line still is no more than that text, trimmed).
func (s *session) sendLine(i int64, line string) string {
	if i != s.sendFrom {
		return line
	}
	if rest, ok := strings.CutPrefix(line, s.sendBefore); ok {
		return rest
	}
	if strings.HasPrefix(s.sendBefore, line) {
		return ""
	}
	return line // redrawn since: all of it is the send's
}

// takeOutput hands out the send's lines above the cursor's line not handed
// out before, each ended by '\n', the newest MaxReadBytes of them.
func (s *session) takeOutput() messages.SendRead {
	v, at := s.view()
	lo, dropped := s.taken, false
	if lo < v.First() {
		lo, dropped = v.First(), true
	}
	if at <= lo {
		s.taken = max(s.taken, lo)
		return messages.SendRead{Truncated: dropped}
	}
	// Line at (the cursor's) reads as "" here: the text ends with '\n'.
	text, _, cut := v.Newest(lo, at+1, s.cfg.MaxReadBytes, func(i int64, l string) string {
		if i == at {
			return ""
		}
		return s.sendLine(i, l)
	})
	s.taken = at
	return messages.SendRead{Delta: text, Truncated: dropped || cut}
}

// endOutput returns the rest of the send's output: the lines not handed
// out, the tail included, the newest MaxReadBytes of them, and the final
// lines it leaves out.
func (s *session) endOutput() messages.SendRead {
	v, _ := s.view()
	from := s.taken
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
