package linux

import (
	"bytes"
	"strconv"
)

// epollTarget is one entry of an epoll interest list.
type epollTarget struct {
	// fd is the target's descriptor number in the process that added it.
	fd int
	// events is the registered event mask (EPOLLIN, EPOLLET, ...).
	events uint32
}

// epollIn is EPOLLIN from include/uapi/linux/eventpoll.h.
const epollIn = 0x1

// parseEpollFdinfo extracts the interest list from /proc/<pid>/fdinfo/<epfd>.
// The kernel (fs/eventpoll.c, ep_show_fdinfo) prints one line per target:
//
//	tfd:        0 events:       19 data:                0  pos:0 ino:3 sdev:16
//
// The column widths and the trailing fields have changed across kernels, so
// the line is read as "key: value" tokens; tfd is decimal and events hex. A
// line whose tfd or events cannot be read is dropped: it can only make a wait
// look absent, never present.
func parseEpollFdinfo(b []byte) []epollTarget {
	var out []epollTarget
	for line := range bytes.Lines(b) {
		f := blankFields(line)
		if len(f) == 0 || !bytes.HasPrefix(f[0], []byte("tfd:")) {
			continue
		}
		fd, ok := tokenValue(f, "tfd:")
		if !ok {
			continue
		}
		ev, ok := tokenValue(f, "events:")
		if !ok {
			continue
		}
		// ParseUint, not ParseInt: the kernel prints no sign.
		n, err := strconv.ParseUint(string(fd), 10, 31)
		if err != nil {
			continue
		}
		e, err := strconv.ParseUint(string(ev), 16, 32)
		if err != nil {
			continue
		}
		out = append(out, epollTarget{fd: int(n), events: uint32(e)})
	}
	return out
}

// tokenValue finds key among fields, either as its own token followed by the
// value ("tfd:", "0") or glued to it ("pos:0").
func tokenValue(fields [][]byte, key string) ([]byte, bool) {
	for i, f := range fields {
		v, ok := bytes.CutPrefix(f, []byte(key))
		if !ok {
			continue
		}
		if len(v) > 0 {
			return v, true
		}
		if i+1 < len(fields) {
			return fields[i+1], true
		}
		return nil, false
	}
	return nil, false
}
