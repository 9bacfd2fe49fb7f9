package linux

import (
	"encoding/binary"
	"testing"
	"time"
)

type memStub map[uint64][]byte

func (m memStub) ReadMem(pid int, addr uint64, n int) ([]byte, error) {
	b := m[addr]
	if len(b) > n {
		b = b[:n]
	}
	return b, nil
}

func spec(sec, frac uint64) []byte {
	b := make([]byte, 16)
	binary.LittleEndian.PutUint64(b, sec)
	binary.LittleEndian.PutUint64(b[8:], frac)
	return b
}

func TestWaitTimeout(t *testing.T) {
	mem := memStub{0x1000: spec(0, 10_000_000), 0x2000: spec(1, 500_000), 0x3000: spec(^uint64(0), 0)}
	p := &prober{m: mem}
	neg := uint64(0xffffffff) // -1 as the int32 it is
	for _, c := range []struct {
		call WaitCall
		args [6]uint64
		want time.Duration
		ok   bool
	}{
		{CallRead, [6]uint64{0, 0x1000, 1}, 0, false},
		{CallPoll, [6]uint64{0x10, 1, 10}, 10 * time.Millisecond, true},
		{CallPoll, [6]uint64{0x10, 1, neg}, 0, false},
		{CallEpollWait, [6]uint64{3, 0x10, 8, 250}, 250 * time.Millisecond, true},
		{CallEpollPwait, [6]uint64{3, 0x10, 8, neg}, 0, false},
		{CallPpoll, [6]uint64{0x10, 1, 0x1000}, 10 * time.Millisecond, true},
		{CallPpoll, [6]uint64{0x10, 1, 0}, 0, false},
		{CallPselect6, [6]uint64{1, 0x10, 0, 0, 0x1000}, 10 * time.Millisecond, true},
		{CallSelect, [6]uint64{1, 0x10, 0, 0, 0x2000}, time.Second + 500*time.Millisecond, true}, // a timeval: microseconds
		{CallSelect, [6]uint64{1, 0x10, 0, 0, 0x3000}, 0, false},                                 // nonsense: a miss
		{CallEpollPwait2, [6]uint64{3, 0x10, 8, 0x1000}, 10 * time.Millisecond, true},
	} {
		got, ok := p.waitTimeout(1, c.call, c.args)
		if got != c.want || ok != c.ok {
			t.Errorf("%s %v: %v %v, want %v %v", c.call, c.args, got, ok, c.want, c.ok)
		}
	}
}
