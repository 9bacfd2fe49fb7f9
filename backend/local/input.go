package local

import (
	"context"
	"time"

	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/record"

	"golang.org/x/sys/unix"
)

// Input: what the runtime writes to the terminal (Write, TryWrite), and
// whether it left the line editor's line open (lineOpen, for
// ClearForeignInput).

func (s *session) Enter() []byte { return []byte{'\r'} }

func (s *session) Write(ctx context.Context, p []byte) error {
	s.noteInput(p)
	_, err := s.write(ctx, p, record.SourceAgent)
	return err
}

// WriteAs implements backend.PersonWriter: a person's input ends any
// line the agent left open (the line editor's content is no longer the
// agent's own), and leaves the line editor in a state the next send's
// clear must not take from its echo alone (personInput).
func (s *session) WriteAs(ctx context.Context, source string, p []byte) (bool, error) {
	s.lineOpen.Store(false)
	s.personInput.Store(true)
	return s.write(ctx, p, source)
}

func (s *session) write(ctx context.Context, p []byte, source string) (secret bool, err error) {
	s.unmuteReplies()
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		_ = s.master.SetWriteDeadline(time.Now())
		close(fired)
	})
	secret = s.secretMode()
	n, err := s.master.Write(p)
	s.recordInput(p[:n], source, secret)
	if !stop() {
		// The callback started: wait until it set its deadline before
		// clearing it, or a late deadline would fail the next write.
		<-fired
		_ = s.master.SetWriteDeadline(time.Time{})
		if ctx.Err() != nil {
			return secret, context.Cause(ctx)
		}
	}
	return secret, err
}

// noteInput records whether a send's input left its line open; the
// agent's input follows any a person left.
func (s *session) noteInput(p []byte) {
	if len(p) == 0 {
		return
	}
	s.personInput.Store(false)
	switch p[len(p)-1] {
	case '\r', '\n', 0x03:
		s.lineOpen.Store(false)
	default:
		s.lineOpen.Store(true)
	}
}

// TryWrite writes what the PTY accepts without waiting: the master is
// non-blocking, and returning true from the raw-write callback tells the
// poller not to wait for writability.
func (s *session) TryWrite(p []byte) (int, error) {
	s.unmuteReplies()
	s.noteInput(p)
	secret := s.secretMode()
	rc, err := s.master.SyscallConn()
	if err != nil {
		return 0, err
	}
	var n int
	var werr error
	err = rc.Write(func(fd uintptr) bool {
		for n < len(p) {
			m, e := unix.Write(int(fd), p[n:])
			if m > 0 {
				n += m
			}
			if e == unix.EINTR {
				continue
			}
			if e != nil {
				if e != unix.EAGAIN {
					werr = e
				}
				return true
			}
		}
		return true
	})
	if err == nil {
		err = werr
	}
	s.recordInput(p[:n], record.SourceAgent, secret)
	return n, err
}

// recordInput numbers what reached the terminal as source's input;
// written at a secret prompt, only its length. The terminal's mode is read
// before the write: the program that reads a secret turns echo back on as
// soon as it has it.
func (s *session) recordInput(p []byte, source string, secret bool) {
	if len(p) > 0 {
		s.stream.input(p, source, secret)
	}
}

var _ backend.PersonWriter = (*session)(nil)
