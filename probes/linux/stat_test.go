package linux

import (
	"errors"
	"io/fs"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// fixture is the fixture tree served as a proc root by FS.
var fixture = FS{Root: "testdata/proc"}

// mapReader is a ProcReader over in-memory files, for failures a directory
// tree cannot express (a read racing the reap returns ESRCH).
type mapReader struct {
	files map[string]string
	errs  map[string]error
}

func (m mapReader) ReadFile(p string) ([]byte, error) {
	if err, ok := m.errs[p]; ok {
		return nil, err
	}
	s, ok := m.files[p]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
	}
	return []byte(s), nil
}

func (m mapReader) ReadLink(p string) (string, error) {
	return "", &fs.PathError{Op: "readlink", Path: p, Err: fs.ErrNotExist}
}

func (m mapReader) ReadDirNames(p string) ([]string, error) {
	if p != "." {
		return nil, &fs.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
	}
	var names []string
	for k := range m.files {
		names = append(names, strings.TrimSuffix(k, "/stat"))
	}
	for k := range m.errs {
		names = append(names, strings.TrimSuffix(k, "/stat"))
	}
	return names, nil
}

const tail = " 34816 5 4194304 0 0 0 0 0 0 0 0 20 0 1 0 777 3133440 389 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n"

func TestParseStat(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Stat
	}{
		{
			name: "plain",
			in:   "5 (sleep) S 4 5 3" + tail,
			want: Stat{PID: 5, PPID: 4, PGRP: 5, Session: 3, TPGID: 5, State: 'S', Threads: 1, StartTime: 777, Comm: "sleep"},
		},
		{
			// Split at the first ')' and this reads as a zombie child of 9.
			name: "comm with spaces and parens",
			in:   "5 (p) Z 9 9 (q) R 4 5 3" + tail,
			want: Stat{PID: 5, PPID: 4, PGRP: 5, Session: 3, TPGID: 5, State: 'R', Threads: 1, StartTime: 777, Comm: "p) Z 9 9 (q"},
		},
		{
			name: "empty comm",
			in:   "5 () S 4 5 3" + tail,
			want: Stat{PID: 5, PPID: 4, PGRP: 5, Session: 3, TPGID: 5, State: 'S', Threads: 1, StartTime: 777, Comm: ""},
		},
		{
			name: "zombie",
			in:   "5 (defunct) Z 4 5 3" + tail,
			want: Stat{PID: 5, PPID: 4, PGRP: 5, Session: 3, TPGID: 5, State: 'Z', Threads: 1, StartTime: 777, Comm: "defunct"},
		},
		{
			name: "no controlling terminal",
			in:   "5 (d) S 1 5 5 0 -1 4194304 0 0 0 0 0 0 0 0 20 0 1 0 9 0 0",
			want: Stat{PID: 5, PPID: 1, PGRP: 5, Session: 5, TPGID: -1, State: 'S', Threads: 1, StartTime: 9, Comm: "d"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseStat([]byte(tt.in))
			if err != nil {
				t.Fatalf("ParseStat: %v", err)
			}
			if got != tt.want {
				t.Fatalf("ParseStat = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestParseStatMalformed(t *testing.T) {
	for _, in := range []string{
		"",
		"5 sleep S 4 5 3" + tail,      // no parentheses
		"5 (sleep S 4 5 3" + tail,     // no closing parenthesis
		"x (sleep) S 4 5 3" + tail,    // pid not a number
		"-5 (sleep) S 4 5 3" + tail,   // pid not positive
		"5 (sleep) S 4 5",             // truncated
		"5 (sleep) SS 4 5 3" + tail,   // state not one letter
		"5 (sleep) S four 5 3" + tail, // ppid not a number
		strings.Replace("5 (s) S 4 5 3"+tail, "777", "-1", 1), // negative starttime
		"5 (a) b (sleep S 4 5 3" + tail[:20],                  // last ')' leaves too few fields
	} {
		if s, err := ParseStat([]byte(in)); !errors.Is(err, ErrMalformed) {
			t.Errorf("ParseStat(%q) = %+v, %v; want ErrMalformed", in, s, err)
		}
	}
}

func TestReadStatFixture(t *testing.T) {
	s, err := ReadStat(fixture, 100)
	if err != nil {
		t.Fatal(err)
	}
	want := Stat{PID: 100, PPID: 1, PGRP: 100, Session: 100, TPGID: 200, State: 'S', Threads: 1, StartTime: 5000, Comm: "p) Z 9 9 (q"}
	if s != want {
		t.Fatalf("ReadStat(100) = %+v, want %+v", s, want)
	}
	if !s.Alive() || s.Identity() != (Identity{PID: 100, StartTime: 5000}) {
		t.Fatalf("Alive=%v Identity=%+v", s.Alive(), s.Identity())
	}

	z, err := ReadStat(fixture, 201)
	if err != nil {
		t.Fatal(err)
	}
	if z.State != 'Z' || z.Alive() {
		t.Fatalf("zombie: state %q, Alive %v", z.State, z.Alive())
	}
}

func TestAlive(t *testing.T) {
	for state, want := range map[byte]bool{'R': true, 'S': true, 'D': true, 'T': true, 't': true, 'I': true, 'Z': false, 'X': false, 'x': false} {
		if got := (Stat{State: state, Threads: 1}).Alive(); got != want {
			t.Errorf("Alive(%q) = %v, want %v", state, got, want)
		}
	}
	// A leader whose main thread exited reads as a zombie while its other
	// threads run: alive, and not yet reapable.
	leader := Stat{State: 'Z', Threads: 3}
	if !leader.Alive() || leader.Reapable() {
		t.Errorf("zombie leader with 3 threads: Alive %v Reapable %v; want alive, not reapable", leader.Alive(), leader.Reapable())
	}
	if done := (Stat{State: 'Z', Threads: 1}); done.Alive() || !done.Reapable() {
		t.Errorf("zombie with its last thread: Alive %v Reapable %v; want reapable", done.Alive(), done.Reapable())
	}
	if (Stat{State: 'S', Threads: 1}).Reapable() {
		t.Error("a sleeping process reads as reapable")
	}
}

func TestReadStatMissing(t *testing.T) {
	for _, pid := range []int{
		4242, // no directory
		300,  // directory left without a stat file
	} {
		_, err := ReadStat(fixture, pid)
		if !errors.Is(err, ErrNotFound) || !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("ReadStat(%d) = %v; want ErrNotFound wrapping fs.ErrNotExist", pid, err)
		}
	}

	// A read that races the reap fails with ESRCH rather than ENOENT.
	r := mapReader{errs: map[string]error{"9/stat": &fs.PathError{Op: "read", Path: "9/stat", Err: syscall.ESRCH}}}
	if _, err := ReadStat(r, 9); !errors.Is(err, ErrNotFound) || !errors.Is(err, syscall.ESRCH) {
		t.Errorf("ReadStat(ESRCH) = %v; want ErrNotFound wrapping ESRCH", err)
	}

	// Any other failure is not "gone": callers must not treat it as exit.
	r = mapReader{errs: map[string]error{"9/stat": &fs.PathError{Op: "open", Path: "9/stat", Err: fs.ErrPermission}}}
	if _, err := ReadStat(r, 9); err == nil || errors.Is(err, ErrNotFound) {
		t.Errorf("ReadStat(EACCES) = %v; want a non-ErrNotFound error", err)
	}
}

func TestReadStatMalformed(t *testing.T) {
	if _, err := ReadStat(FS{Root: "testdata/malformed"}, 7); !errors.Is(err, ErrMalformed) {
		t.Fatalf("ReadStat = %v; want ErrMalformed", err)
	}
	// A file that describes another pid is rejected, never trusted.
	r := mapReader{files: map[string]string{"9/stat": "10 (x) S 1 10 10" + tail}}
	if _, err := ReadStat(r, 9); !errors.Is(err, ErrMalformed) {
		t.Fatalf("ReadStat(pid mismatch) = %v; want ErrMalformed", err)
	}
}

func TestListStatsFixture(t *testing.T) {
	stats, err := ListStats(fixture)
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, s := range stats {
		pids = append(pids, s.PID)
	}
	// 300 vanished (no stat), and "0100", "self", "meminfo" are not pids.
	if want := []int{1, 100, 200, 201}; !slices.Equal(pids, want) {
		t.Fatalf("ListStats pids = %v, want %v", pids, want)
	}
	if stats[2].State != 'T' || stats[3].State != 'Z' {
		t.Fatalf("states = %q %q", stats[2].State, stats[3].State)
	}
}

func TestListStatsSkipsVanished(t *testing.T) {
	r := mapReader{
		files: map[string]string{"5/stat": "5 (a) S 1 5 5" + tail},
		errs: map[string]error{
			"6/stat": &fs.PathError{Op: "read", Path: "6/stat", Err: syscall.ESRCH},
			"7/stat": &fs.PathError{Op: "open", Path: "7/stat", Err: fs.ErrNotExist},
		},
	}
	stats, err := ListStats(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(stats) != 1 || stats[0].PID != 5 {
		t.Fatalf("ListStats = %+v, want only pid 5", stats)
	}
}

func TestListStatsFailsClosed(t *testing.T) {
	if _, err := ListStats(FS{Root: "testdata/malformed"}); !errors.Is(err, ErrMalformed) {
		t.Fatalf("ListStats(malformed) = %v; want ErrMalformed", err)
	}
	r := mapReader{errs: map[string]error{"5/stat": &fs.PathError{Op: "open", Path: "5/stat", Err: fs.ErrPermission}}}
	if _, err := ListStats(r); err == nil {
		t.Fatal("ListStats(EACCES) = nil error; an unreadable process must not look absent")
	}
	if _, err := ListStats(FS{Root: "testdata/nonexistent"}); err == nil {
		t.Fatal("ListStats(missing root) = nil error")
	}
}

func TestFSReadLink(t *testing.T) {
	got, err := fixture.ReadLink("self")
	if err != nil || got != "100" {
		t.Fatalf("ReadLink(self) = %q, %v", got, err)
	}
}
