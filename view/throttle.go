package view

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// Wrong operator tokens are throttled, so that guessing the token (256
// random bits: hopeless anyway) costs time and cannot flood the log; the
// right token is never locked out by others' tries. Each source (an IPv4
// address, an IPv6 /64) and the server overall keep a leaky bucket of
// recent wrong tries. A source that tried sourceBurst wrong tokens is
// refused unchecked (HTTP 429) until its bucket leaks below that, one a
// second; while the server overall sees a storm (stormLevel recent wrong
// tries, from anywhere), a source that tried a wrong token lately is
// refused until its bucket is empty. A source with no recent wrong try
// is always checked: the operator, at their own address, logs in
// whatever others do, and one who mistyped waits a second at most in a
// storm.
const (
	sourceBurst = 10
	sourceLeak  = 1.0 // tries a second
	stormLevel  = 100
	overallLeak = 10.0 // tries a second
	// maxSources bounds the sources kept; beyond, every new one shares
	// one bucket (which a storm's many addresses fill at once).
	maxSources = 4096
)

type throttle struct {
	now func() time.Time

	mu      sync.Mutex
	overall bucket
	sources map[string]*bucket
}

// bucket is a leaky bucket's level at a time.
type bucket struct {
	level float64
	at    time.Time
}

// levelAt is the bucket's level at now, leaking rate a second.
func (b *bucket) levelAt(now time.Time, rate float64) float64 {
	l := b.level - now.Sub(b.at).Seconds()*rate
	if l < 0 {
		l = 0
	}
	b.level, b.at = l, now
	return l
}

func newThrottle(now func() time.Time) *throttle {
	return &throttle{now: now, sources: map[string]*bucket{}}
}

// source is the throttle's name for r's sender.
func source(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return host
	}
	if ip.To4() == nil {
		return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
	}
	return ip.String()
}

// wait is how long src must wait before its next try is checked (0:
// now).
func (t *throttle) wait(src string) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	b := t.sources[src]
	if b == nil && len(t.sources) >= maxSources {
		b = t.sources[""] // an untracked source: the shared bucket
	}
	if b == nil {
		return 0
	}
	limit := float64(sourceBurst)
	if t.overall.levelAt(now, overallLeak) >= stormLevel {
		limit = 1
	}
	l := b.levelAt(now, sourceLeak)
	if l < limit {
		return 0
	}
	return time.Duration((l - limit + 1) / sourceLeak * float64(time.Second))
}

// failed counts a wrong try of src. It reports whether to log it: the
// first of an episode, and the one that starts the source's throttle
// (not every try of a flood).
func (t *throttle) failed(src string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	t.overall.levelAt(now, overallLeak)
	t.overall.level++
	b := t.sources[src]
	if b == nil {
		if len(t.sources) >= maxSources {
			for k, o := range t.sources {
				if o.levelAt(now, sourceLeak) == 0 {
					delete(t.sources, k)
				}
			}
		}
		if len(t.sources) >= maxSources {
			src = "" // the shared bucket
			b = t.sources[src]
		}
		if b == nil {
			b = &bucket{at: now}
			t.sources[src] = b
		}
	}
	before := b.levelAt(now, sourceLeak)
	b.level++
	return before < 1 || (before < sourceBurst && b.level >= sourceBurst)
}
