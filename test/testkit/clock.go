package testkit

import (
	"sync"
	"time"

	"github.com/ptyactor/ptyactor/actors"
)

// OffsetClock is the system clock moved forward by hand (an actors.Clock
// for ServiceOptions.Clock): timers stay real, so sends still settle, and
// Now jumps when the test calls Advance, so a test can make time pass
// (a task's TTL, a write that "takes" long) without sleeping.
type OffsetClock struct {
	mu  sync.Mutex
	off time.Duration
}

// Now is the system's time plus every Advance so far.
func (c *OffsetClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.off)
}

// AfterFunc is time.AfterFunc: Advance moves no timer.
func (c *OffsetClock) AfterFunc(d time.Duration, f func()) actors.Timer {
	return time.AfterFunc(d, f)
}

// Advance moves Now forward by d.
func (c *OffsetClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.off += d
	c.mu.Unlock()
}
