package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/ptyactor/ptyactor/record"
	"github.com/ptyactor/ptyactor/record/replay"
)

// limitFlag is -idle-time-limit: a duration, or off (no cap).
type limitFlag struct {
	d   time.Duration
	set bool
}

func (f *limitFlag) String() string {
	if f == nil || !f.set {
		return "off"
	}
	return f.d.String()
}

func (f *limitFlag) Set(s string) error {
	if s == "off" {
		f.set = false
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		// asciinema's -i takes seconds: 1.5 is 1.5s.
		secs, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil {
			return err
		}
		d = time.Duration(secs * float64(time.Second))
	}
	if d < 0 {
		return errors.New("a negative limit")
	}
	f.d, f.set = d, true
	return nil
}

func playCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("play", flag.ContinueOnError)
	keyFile := keyFlag(fs)
	speed := fs.Float64("speed", 1, "play `N` times as fast (0.5: half as fast)")
	var idle limitFlag
	fs.Var(&idle, "idle-time-limit", "cut every pause longer than `D` (1s, or seconds: 1.5) to D, before -speed; 0 plays without pauses; off: none cut")
	file, code := parse(fs, args, stderr)
	if code >= 0 {
		return code
	}
	if !(*speed > 0) {
		fmt.Fprintf(stderr, "ptyrec play: -speed %v: it must be more than 0\n", *speed)
		return exitUsage
	}
	p := &player{speed: *speed, idle: -1, keys: make(chan byte, 16)}
	if idle.set {
		p.idle = idle.d
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Keys only from a terminal: space pauses and resumes, "." plays the
	// next output while paused, q quits (Ctrl-C too, as a signal).
	if fd := int(os.Stdin.Fd()); isTerminal(fd) {
		restore, err := cbreak(fd)
		if err != nil {
			fmt.Fprintf(stderr, "ptyrec play: the terminal's mode: %v\n", err)
			return exitFail
		}
		defer restore()
		go readKeys(os.Stdin, p.keys)
	}
	return read("play", file, *keyFile, "", stdout, stderr, func(w io.Writer, r *record.Reader) error {
		return p.play(ctx, w, r)
	})
}

// readKeys sends each byte read from in to keys; it ends with in (the
// process exits with it blocked in a read, which holds nothing).
func readKeys(in io.Reader, keys chan<- byte) {
	buf := make([]byte, 64)
	for {
		n, err := in.Read(buf)
		for _, b := range buf[:n] {
			keys <- b
		}
		if err != nil {
			close(keys)
			return
		}
	}
}

// player writes a record's output with its timing.
type player struct {
	speed float64
	// idle caps each pause before the speed applies; negative: no cap.
	idle   time.Duration
	keys   chan byte
	paused bool
}

// errQuit ends a play the person stopped.
var errQuit = errors.New("quit")

// play writes the record's output events to w, each after the pause
// before it in the record (capped by idle, divided by speed). A record
// cut at a checkpoint starts with the checkpoint's screen. Resizes are
// not played: the terminal's size is the person's. A quit is not an
// error; the Reader's errors are returned as export returns them.
func (p *player) play(ctx context.Context, w io.Writer, r *record.Reader) error {
	first, err := r.Next()
	if err != nil {
		return err
	}
	if first.Kind == record.KindCheckpoint && first.Checkpoint != nil && first.Checkpoint.Screen != nil {
		if _, err := io.WriteString(w, replay.Paint(first.Checkpoint)); err != nil {
			return err
		}
	}
	prev := first.Mono
	for {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if ev.Kind != record.KindOutput || ev.Data == "" {
			continue
		}
		gap := max(ev.Mono-prev, 0)
		prev = ev.Mono
		if p.idle >= 0 {
			gap = min(gap, p.idle)
		}
		if err := p.wait(ctx, time.Duration(float64(gap)/p.speed)); errors.Is(err, errQuit) {
			return nil
		}
		if _, err := io.WriteString(w, ev.Data); err != nil {
			return err
		}
	}
}

// wait waits d, or for the keys while paused; errQuit when the person
// quit (q, or SIGINT or SIGTERM).
func (p *player) wait(ctx context.Context, d time.Duration) error {
	var timer <-chan time.Time
	var t *time.Timer
	end := time.Now().Add(d)
	arm := func() {
		t = time.NewTimer(time.Until(end))
		timer = t.C
	}
	if !p.paused {
		arm()
	}
	defer func() {
		if t != nil {
			t.Stop()
		}
	}()
	left := d
	for {
		select {
		case <-ctx.Done():
			return errQuit
		case <-timer:
			return nil
		case k, ok := <-p.keys:
			if !ok {
				p.keys = nil // stdin ended: no more keys, play on
				continue
			}
			switch {
			case k == 'q' || k == 3: // 3: Ctrl-C, where the terminal does not signal it
				return errQuit
			case k == ' ' && p.paused:
				p.paused = false
				end = time.Now().Add(left)
				arm()
			case k == ' ':
				p.paused = true
				left = max(time.Until(end), 0)
				t.Stop()
				t, timer = nil, nil
			case k == '.' && p.paused:
				return nil // the next output at once; still paused
			}
		}
	}
}
