package view

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

// The throttle on a fake clock: a source gets sourceBurst wrong tries,
// then one a second; a storm (stormLevel wrong tries overall) leaves a
// source that tried lately one a second, and one that did not its
// tries; an IPv6 source is its /64; the sources kept are bounded.
func TestThrottle(t *testing.T) {
	now := time.Unix(1000, 0)
	th := newThrottle(func() time.Time { return now })
	for i := range sourceBurst {
		if w := th.wait("a"); w != 0 {
			t.Fatalf("try %d waits %v", i, w)
		}
		th.failed("a")
	}
	if w := th.wait("a"); w <= 0 || w > time.Second {
		t.Fatalf("after the burst: wait %v, want up to a second", w)
	}
	now = now.Add(1100 * time.Millisecond)
	if w := th.wait("a"); w != 0 {
		t.Fatalf("a second later: wait %v", w)
	}
	if w := th.wait("b"); w != 0 {
		t.Fatalf("another source waits %v", w)
	}
	// A storm from many sources.
	for i := range stormLevel {
		th.failed(fmt.Sprintf("s%d", i))
	}
	th.failed("c")
	if w := th.wait("c"); w <= 0 {
		t.Fatal("in a storm, a source that just tried wrong is checked again at once")
	}
	if w := th.wait("fresh"); w != 0 {
		t.Fatalf("in a storm, a source that did not try waits %v", w)
	}
	now = now.Add(time.Second)
	if w := th.wait("c"); w != 0 {
		t.Fatalf("in a storm, a second after its try: wait %v", w)
	}
	// Bounded: past maxSources, new sources share one bucket.
	for i := range 2 * maxSources {
		th.failed(fmt.Sprintf("x%d", i))
	}
	th.mu.Lock()
	n := len(th.sources)
	th.mu.Unlock()
	if n > maxSources+1 {
		t.Fatalf("%d sources kept", n)
	}
	for _, tc := range []struct{ addr, want string }{
		{"192.0.2.7:4000", "192.0.2.7"},
		{"[2001:db8:1:2:3:4:5:6]:4000", "2001:db8:1:2::/64"},
		{"[2001:db8:1:2:ffff::1]:1", "2001:db8:1:2::/64"},
	} {
		if got := source(&http.Request{RemoteAddr: tc.addr}); got != tc.want {
			t.Errorf("source(%s) = %s, want %s", tc.addr, got, tc.want)
		}
	}
}
