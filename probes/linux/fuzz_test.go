package linux

import (
	"encoding/binary"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The decoders read what the kernel wrote, so "well-formed" is defined by
// the kernel's own format strings, and everything else is malformed. The
// fuzz targets below hold each decoder to a reference written independently
// of it (regular expressions over the format), in both directions: a
// positive only for well-formed input, with the values the format carries,
// and no well-formed input refused.

// syscallLineRE is proc_pid_syscall (fs/proc/base.c): "running", or
// "%d 0x%llx 0x%llx" for a task not in a syscall, or "%d" and eight
// "0x%llx" for one blocked in syscall nr. Tolerated beyond the exact
// format: runs of ASCII blanks between fields and around the line, upper
// case hex digits and leading zeros, none of which changes a value.
// Malformed: any other byte (a sign the kernel never prints, a Unicode
// space, a missing 0x), a wrong field count, a value out of range.
var syscallLineRE = regexp.MustCompile(`^[ \t\n\v\f\r]*(?:(running)|(-0*[1-9][0-9]*)((?:[ \t\n\v\f\r]+0x[0-9a-fA-F]+){2})|([0-9]+)((?:[ \t\n\v\f\r]+0x[0-9a-fA-F]+){8}))[ \t\n\v\f\r]*$`)

// referenceSyscall decodes b by syscallLineRE; ok is false for malformed
// input.
func referenceSyscall(b []byte) (l SyscallLine, ok bool) {
	m := syscallLineRE.FindSubmatch(b)
	if m == nil {
		return l, false
	}
	if m[1] != nil {
		return SyscallLine{Running: true}, true
	}
	nr, regs := m[2], m[3]
	dst := []*uint64{&l.SP, &l.PC}
	if nr == nil {
		nr, regs = m[4], m[5]
		dst = []*uint64{&l.Args[0], &l.Args[1], &l.Args[2], &l.Args[3], &l.Args[4], &l.Args[5], &l.SP, &l.PC}
	}
	var err error
	if l.Nr, err = strconv.ParseInt(string(nr), 10, 64); err != nil {
		return l, false // out of range
	}
	for i, f := range strings.Fields(string(regs)) {
		if *dst[i], err = strconv.ParseUint(f[2:], 16, 64); err != nil {
			return l, false
		}
	}
	return l, true
}

func renderSyscall(l SyscallLine) string {
	if l.Running {
		return "running\n"
	}
	if l.Nr < 0 {
		return fmt.Sprintf("%d 0x%x 0x%x\n", l.Nr, l.SP, l.PC)
	}
	a := l.Args
	return fmt.Sprintf("%d 0x%x 0x%x 0x%x 0x%x 0x%x 0x%x 0x%x 0x%x\n", l.Nr, a[0], a[1], a[2], a[3], a[4], a[5], l.SP, l.PC)
}

// FuzzParseSyscall: ParseSyscall never panics, accepts exactly the
// well-formed lines (syscallLineRE) with the values they carry, refuses
// everything else with ErrMalformed, and a positive renders back, in the
// kernel's format, to a line that parses to the same value.
func FuzzParseSyscall(f *testing.F) {
	for _, s := range []string{
		"running\n",
		"-1 0x7ffc7ff5a610 0x7f8624efd954\n",
		"270 0x1 0x7ffc6c568630 0x0 0x0 0x0 0x7ffc6c568560 0x7ffc6c568520 0x7f40bc1f3aec\n",
		"0 0x0 0x55d0c6f8a2a0 0x1 0x0 0x0 0x0 0x7ffe0f1c3a18 0x7f3c2b1147e2\n",
		"441 0xffffffffffffffff 0x0 0x0 0x0 0x0 0x0 0x0 0x0",
		"63 0x0 0xffffd0a1c2f0 0x1 0x0 0x0 0x0 0xffffd0a1c2b0 0xffff8a2c1e38\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := ParseSyscall(b)
		want, ok := referenceSyscall(b)
		switch {
		case ok && err != nil:
			t.Fatalf("ParseSyscall(%q) refused a well-formed line: %v", b, err)
		case !ok && err == nil:
			t.Fatalf("ParseSyscall(%q) = %+v: a positive on a malformed line", b, got)
		case !ok:
			if !isMalformed(err) {
				t.Fatalf("ParseSyscall(%q): error %v does not wrap ErrMalformed", b, err)
			}
			return
		case got != want:
			t.Fatalf("ParseSyscall(%q) = %+v, want %+v", b, got, want)
		}
		line := renderSyscall(got)
		if again, err := ParseSyscall([]byte(line)); err != nil || again != got {
			t.Fatalf("round trip of %+v through %q: %+v, %v", got, line, again, err)
		}
	})
}

// fdinfoLineRE is one target line of ep_show_fdinfo (fs/eventpoll.c):
// "tfd: %8d events: %8x data: %16llx  pos:%lli ino:%lx sdev:%x". The
// decoder reads "key: value" tokens because the columns changed across
// kernels; the reference keeps exactly that much freedom: tfd first,
// "events:" as a later token, values glued to their key or in the next
// field, anything after them ignored. tfd is decimal, events hex.
var fdinfoTokenRE = regexp.MustCompile(`^(tfd|events):(.*)$`)

// referenceFdinfo decodes one fdinfo file line by line: a line contributes
// a target only when it starts with the tfd key and both values are numbers
// of the kernel's format in range.
func referenceFdinfo(b []byte) []epollTarget {
	var out []epollTarget
	for _, line := range strings.Split(string(b), "\n") {
		fields := asciiFields(line)
		if len(fields) == 0 || !strings.HasPrefix(fields[0], "tfd:") {
			continue
		}
		vals := map[string]string{}
		for i := 0; i < len(fields); i++ {
			m := fdinfoTokenRE.FindStringSubmatch(fields[i])
			if m == nil {
				continue
			}
			if _, seen := vals[m[1]]; seen {
				continue // the first occurrence counts
			}
			v := m[2]
			if v == "" && i+1 < len(fields) {
				v = fields[i+1]
			}
			vals[m[1]] = v
		}
		fd, ok1 := decimal(vals["tfd"], 1<<31-1)
		ev, ok2 := hex32(vals["events"])
		if ok1 && ok2 {
			out = append(out, epollTarget{fd: int(fd), events: uint32(ev)})
		}
	}
	return out
}

// asciiFields splits on the blanks the kernel pads its columns with.
func asciiFields(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return strings.ContainsRune(" \t\n\v\f\r", r) })
}

var (
	decimalRE = regexp.MustCompile(`^[0-9]+$`)
	hexRE     = regexp.MustCompile(`^[0-9a-fA-F]+$`)
)

func decimal(s string, limit uint64) (uint64, bool) {
	if !decimalRE.MatchString(s) {
		return 0, false
	}
	v, err := strconv.ParseUint(s, 10, 64)
	return v, err == nil && v <= limit
}

func hex32(s string) (uint64, bool) {
	if !hexRE.MatchString(s) {
		return 0, false
	}
	v, err := strconv.ParseUint(s, 16, 32)
	return v, err == nil
}

// FuzzEpollFdinfo: parseEpollFdinfo never panics and reports exactly the
// targets of well-formed lines; and epollWants, which follows those targets,
// is positive only when a well-formed line names the terminal with EPOLLIN.
// The seeds are the kernel's layouts of several versions; the fuzzer
// mutates them into near misses (a glued value, a sign, a missing field,
// a Unicode space).
func FuzzEpollFdinfo(f *testing.F) {
	for _, s := range []string{
		"pos:\t0\nflags:\t02\nmnt_id:\t15\nino:\t1057\ntfd:        0 events:       19 data:                0  pos:0 ino:3 sdev:16\n",
		"tfd:        5 events:       19 data:       7f0000000005  pos:0 ino:2a1 sdev:d\ntfd:        0 events:        1 data:                0  pos:0 ino:3 sdev:16\n",
		"tfd:        0 events:       18 data:                0  pos:0 ino:3 sdev:16\n",
		"tfd:0 events:19\n",
		"tfd:        9 events:       19 data:                9\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got := parseEpollFdinfo(b)
		want := referenceFdinfo(b)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("parseEpollFdinfo(%q) = %v, want %v", b, got, want)
		}
		// fd 0 is the terminal; fd 9 is a nested epoll instance whose
		// interest list is empty, so it never makes a wait present.
		fp := newFake()
		fp.files["300/fdinfo/7"] = string(b)
		fp.files["300/fdinfo/9"] = "pos:\t0\n"
		fp.links["300/fd/0"] = "/dev/pts/3"
		fp.links["300/fd/9"] = eventpollLink
		p := prober{r: fp, m: fp, arch: ArchFor("amd64"), term: Terminal{Paths: []string{"/dev/pts/3"}}, links: map[fdKey]string{}}
		wantWait := false
		for _, tg := range want {
			if tg.fd == 0 && tg.events&epollIn != 0 {
				wantWait = true
			}
		}
		if gotWait := p.epollWants(300, 7, 0); gotWait != wantWait {
			t.Fatalf("epollWants over %q = %v, want %v", b, gotWait, wantWait)
		}
	})
}

// The terminal's descriptors in the select and poll targets, and the
// address their argument arrays are read from.
const (
	fuzzTermFD = 0
	fuzzArgs   = 0x7ffc00001000
)

// waitProber is a prober over one process (pid 300) whose descriptors 0 and
// extra (when it is in range) are the terminal, and whose memory at
// fuzzArgs is mem: a short read past its end fails, as pread on
// /proc/<pid>/mem does on an unmapped page.
func waitProber(mem []byte, extra int) prober {
	fp := newFake()
	fp.links["300/fd/0"] = "/dev/pts/3"
	fp.links["300/fd/1"] = "pipe:[42]"
	fp.links["300/fd/2"] = "/dev/pts/4" // another terminal
	if extra > 2 {
		fp.links["300/fd/"+strconv.Itoa(extra)] = "/dev/tty"
	}
	fp.mem[300] = []memBlock{{addr: fuzzArgs, b: mem}}
	return prober{r: fp, m: fp, arch: ArchFor("amd64"), term: Terminal{Paths: []string{"/dev/pts/3", "/dev/tty"}}, links: map[fdKey]string{}}
}

func isTermFD(fd, extra int) bool { return fd == fuzzTermFD || extra > 2 && fd == extra }

// FuzzSelectWants: the fd_set decoder of select/pselect6. A positive needs
// nfds >= 1, a read set fully readable for min(nfds, FD_SETSIZE)
// descriptors (a set cut short by an unmapped page is malformed), and a bit
// set, below nfds, for a descriptor that is the terminal. Anything else,
// including a bit for another terminal or a bit at or above nfds, is not a
// wait.
func FuzzSelectWants(f *testing.F) {
	f.Add(int32(1), []byte{0x01}, uint16(0), false)
	f.Add(int32(8), []byte{0xfe}, uint16(0), false)
	f.Add(int32(12), []byte{0x00, 0x08}, uint16(11), false)
	f.Add(int32(1024), make([]byte, 128), uint16(1000), false)
	f.Add(int32(-1), []byte{0xff}, uint16(0), false)
	f.Add(int32(64), []byte{0x01}, uint16(0), true)
	f.Fuzz(func(t *testing.T, nfds int32, set []byte, extra uint16, nullSet bool) {
		if len(set) > 256 {
			return
		}
		p := waitProber(set, int(extra))
		addr := uint64(fuzzArgs)
		if nullSet {
			addr = 0
		}
		want := false
		if n := min(int(nfds), maxFDs); nfds >= 1 && !nullSet && len(set) >= (n+7)/8 {
			for fd := range n {
				if set[fd/8]&(1<<(fd%8)) != 0 && isTermFD(fd, int(extra)) {
					want = true
				}
			}
		}
		if got := p.selectWants(300, nfds, addr); got != want {
			t.Fatalf("selectWants(nfds=%d, set=%x, terminal fds 0 and %d) = %v, want %v", nfds, set, extra, got, want)
		}
	})
}

// FuzzPollWants: the struct pollfd array of poll/ppoll, 8 bytes an entry
// (int fd, short events, short revents, little-endian). A positive needs
// nfds >= 1, all min(nfds, FD_SETSIZE) entries readable, and an entry whose
// fd is the terminal (a negative fd is ignored by the kernel) asking for
// POLLIN, POLLPRI or POLLRDNORM. revents never matters.
func FuzzPollWants(f *testing.F) {
	entry := func(fd int32, events, revents uint16) []byte {
		b := make([]byte, 8)
		binary.LittleEndian.PutUint32(b, uint32(fd))
		binary.LittleEndian.PutUint16(b[4:], events)
		binary.LittleEndian.PutUint16(b[6:], revents)
		return b
	}
	f.Add(uint32(1), entry(0, 0x1, 0), uint16(0))
	f.Add(uint32(1), entry(0, 0x4, 0x1), uint16(0))
	f.Add(uint32(2), append(entry(1, 0x1, 0), entry(-1, 0x1, 0)...), uint16(0))
	f.Add(uint32(2), append(entry(3, 0x0, 0), entry(17, 0x40, 0)...), uint16(17))
	f.Add(uint32(3), append(entry(1, 0x1, 0), entry(0, 0x2, 0)...), uint16(0))
	f.Add(uint32(1<<31), entry(0, 0x1, 0), uint16(0))
	f.Fuzz(func(t *testing.T, nfds uint32, arr []byte, extra uint16) {
		if len(arr) > 1024 {
			return
		}
		p := waitProber(arr, int(extra))
		want := false
		if n := min(int(nfds), maxFDs); nfds >= 1 && len(arr) >= n*8 {
			for i := range n {
				e := arr[i*8 : i*8+8]
				fd := int32(uint32(e[0]) | uint32(e[1])<<8 | uint32(e[2])<<16 | uint32(e[3])<<24)
				events := uint16(e[4]) | uint16(e[5])<<8
				if fd >= 0 && events&(0x1|0x2|0x40) != 0 && isTermFD(int(fd), int(extra)) {
					want = true
				}
			}
		}
		if got := p.pollWants(300, fuzzArgs, nfds); got != want {
			t.Fatalf("pollWants(nfds=%d, fds=%x, terminal fds 0 and %d) = %v, want %v", nfds, arr, extra, got, want)
		}
	})
}

func isMalformed(err error) bool { return errors.Is(err, ErrMalformed) }
