package view

import (
	"bytes"
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/coder/websocket"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// A page's message of any size up to the bound reads whole, through the
// small buffer or the large one; past the buffer, a typed error.
func TestReadMessage(t *testing.T) {
	l := newLargeReader()
	ctx := testkit.Ctx(t)
	for _, n := range []int{0, 10, smallMessage - 1, smallMessage, smallMessage + 1, maxMessage} {
		in := bytes.Repeat([]byte{'k'}, n)
		got, err := l.readMessage(ctx, bytes.NewReader(in))
		if err != nil || !bytes.Equal(got, in) {
			t.Fatalf("%d bytes: got %d, %v", n, len(got), err)
		}
	}
	if _, err := l.readMessage(ctx, bytes.NewReader(make([]byte, maxMessage+smallMessage))); !errors.Is(err, errMessageTooBig) {
		t.Fatalf("past the buffer: %v, want errMessageTooBig", err)
	}
}

// Four sockets sending a message past the bound at once cost the server
// about one buffer, not a growing buffer each (16 MiB of allocations per
// refused message before).
func TestLargeMessagesReadOneAtATime(t *testing.T) {
	s := serve(t)
	big := []byte(strings.Repeat("a", 5<<20))
	var cs []*websocket.Conn
	for range 4 {
		c, err := s.dial(s.srv.URL, true, hello{})
		if err != nil {
			t.Fatal(err)
		}
		cs = append(cs, c)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var wg sync.WaitGroup
	codes := make([]websocket.StatusCode, len(cs))
	for i, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = c.Write(testkit.Ctx(t), websocket.MessageText, big)
			for {
				if _, _, err := c.Read(testkit.Ctx(t)); err != nil {
					codes[i] = websocket.CloseStatus(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	runtime.ReadMemStats(&after)
	for i, code := range codes {
		if code != websocket.StatusMessageTooBig {
			t.Errorf("socket %d closed with %d, want 1009", i, code)
		}
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
		t.Fatalf("the server allocated %d MiB for four refused 5 MiB messages", grew>>20)
	}
}
