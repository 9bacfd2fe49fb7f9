package local

import (
	"errors"
	"io"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/ptyactor/ptyactor/backend"
	"golang.org/x/sys/unix"
)

// The pump is the one reader of the master: it reads what the program
// wrote, has the emulator parse it under mu (consume, feed), and reports
// the facts it finds; after the shell's exit it drains the master before
// the exit is reported (reportExit).

// pumpBufSize is one read of the master.
const (
	pumpBufSize = 64 << 10
)

// pumpBufs holds the pumps' read buffers between bursts of output. A pump
// takes one when the master turns readable and gives it back when a read
// finds the master empty (EAGAIN), so an idle session, whose pump waits in
// the poller, holds none: hundreds of idle sessions would otherwise pin
// 64 KiB each.
var pumpBufs = sync.Pool{New: func() any { b := make([]byte, pumpBufSize); return &b }}

// pumpBuf is the buffer a pump holds while output flows (nil between
// bursts). Only the pump goroutine touches it.
type pumpBuf struct{ b *[]byte }

func (p *pumpBuf) get() []byte {
	if p.b == nil {
		p.b = pumpBufs.Get().(*[]byte)
	}
	return *p.b
}

// put returns the buffer to the pool. The pump calls it only after every
// byte read into it was consumed: nothing keeps a reference to a chunk
// past consume (the emulator and the prompt tracker copy what they keep).
func (p *pumpBuf) put() {
	if p.b != nil {
		pumpBufs.Put(p.b)
		p.b = nil
	}
}

// pump reads the master until EOF (EIO on Linux once every slave holder is
// gone) or Close, parsing under mu. It is also the barrier behind the exit
// report: a poke (an expired read deadline) makes it finish the chunk it
// holds, drain everything still available, and only then report.
func (s *session) pump() {
	defer close(s.pumpDone)
	var buf pumpBuf
	defer buf.put()
	rc, err := s.master.SyscallConn()
	for err == nil {
		var n int
		n, err = s.readMaster(rc, &buf)
		if n > 0 {
			s.consume(buf.get()[:n])
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			if s.onPoke(&buf) {
				err = nil
				continue
			}
			err = io.EOF
		}
	}
	if !isEOF(err) && !errors.Is(err, os.ErrClosed) && !s.masterClosed.Load() {
		s.log.Warn().Err(err).Msg("read PTY master")
	}
	<-s.waitDone
	s.reportExit()
}

// readMaster waits for output and reads one chunk through the runtime
// poller into buf, which holds the chunk when it returns bytes. It leaves
// readState odd when it returns bytes; consume makes it even. The buffer
// goes back to the pool while the pump waits.
func (s *session) readMaster(rc syscall.RawConn, buf *pumpBuf) (int, error) {
	var n int
	var rerr error
	err := rc.Read(func(fd uintptr) bool {
		for {
			p := buf.get()
			s.readState.Add(1)
			n, rerr = unix.Read(int(fd), p)
			if n > 0 {
				return true
			}
			s.readState.Add(1)
			switch rerr {
			case unix.EINTR:
				continue
			case unix.EAGAIN:
				buf.put()
				s.noteQuiet(int(fd))
				return false // wait in the poller
			case nil:
				rerr = io.EOF
			}
			n = 0
			return true
		}
	})
	if err != nil {
		return 0, err
	}
	return n, rerr
}

// poke wakes the pump out of its read. The request flags are set before
// the deadline, and the pump clears the deadline before taking the flags,
// so no request is lost between the two.
func (s *session) poke() { _ = s.master.SetReadDeadline(time.Now()) }

// onPoke drains what is available and answers pending requests. It reports
// false when the master reached end of file while draining.
func (s *session) onPoke(buf *pumpBuf) bool {
	_ = s.master.SetReadDeadline(time.Time{})
	open := s.drainAvailable(buf)
	if open && s.exited() {
		s.reportExit()
	}
	return open
}

// drainAvailable reads, without waiting, until the master has nothing
// more. A read that finds the line discipline empty flushes the PTY's
// pending work first, so bytes the program wrote before this call are all
// read here. It reports false at end of file.
func (s *session) drainAvailable(buf *pumpBuf) bool {
	for {
		var n int
		var rerr error
		p := buf.get()
		// Control, not RawConn.Read: a poke that sets a new deadline must
		// not cut this drain short (the poller would refuse the read).
		s.readState.Add(1)
		err := control(s.master, func(fd int) error {
			n, rerr = unix.Read(fd, p)
			return nil
		})
		if err == nil && n > 0 {
			s.consume(p[:n])
			continue
		}
		s.readState.Add(1)
		if err != nil {
			return !errors.Is(err, os.ErrClosed)
		}
		switch {
		case rerr == unix.EINTR:
			continue
		case rerr == unix.EAGAIN:
			buf.put()
			_ = control(s.master, func(fd int) error { s.noteQuiet(fd); return nil })
			return true
		case rerr == nil || isEOF(rerr):
			return false // end of file
		default:
			s.log.Warn().Err(rerr).Msg("drain PTY master")
			return true
		}
	}
}

// isEOF normalizes end of output: Linux reports a hung-up PTY master as EIO.
// This is the one place that knows.
func isEOF(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.EIO)
}

func (s *session) reportExit() {
	s.mu.Lock()
	if s.exit.reported {
		s.mu.Unlock()
		return
	}
	s.exit.reported = true
	st := s.exit.status
	s.mu.Unlock()
	s.events.Exited(st)
}

// consume parses one chunk read from the master, ends that read (readState
// even) and reports facts. Output is reported before a prompt so a send that
// settles on the prompt already holds its output.
func (s *session) consume(p []byte) {
	s.mu.Lock()
	s.feed(p)
	// Numbered under mu, after the emulator took it: a screen read then
	// names the newest output it shows.
	s.stream.output(p)
	collecting, epoch := s.send.collecting, s.epoch
	var fact *backend.PromptFact
	if s.prompt.complete() && !s.prompt.reported {
		s.prompt.reported = true
		fact = &backend.PromptFact{Epoch: s.epoch, ExitCode: s.prompt.code}
		s.stream.prompt(s.prompt.code)
	}
	s.mu.Unlock()
	// Parsed: the read is over for the exact tier's drained check, which
	// may run inside the facts below (the runtime carries them, and a
	// probe, on this goroutine).
	s.readState.Add(1)
	if collecting {
		s.events.Output(epoch)
	}
	if fact != nil {
		fact.ShellForeground = s.shellForeground()
		s.events.Prompt(*fact)
	}
}

// feed takes one chunk under mu. The emulator is the one parser: it
// draws the screen and the transcript, answers queries, and hands the
// prompt tracker the OSC payloads and, while it is armed, the text after
// them.
func (s *session) feed(p []byte) { s.screen.Feed(p) }

func (s *session) shellForeground() bool {
	pgid, err := s.Foreground()
	return err == nil && pgid == s.PID()
}
