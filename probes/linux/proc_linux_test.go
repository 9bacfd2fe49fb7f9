//go:build linux

package linux

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

func TestReadStatSelf(t *testing.T) {
	s, err := ReadStat(FS{}, os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if s.PID != os.Getpid() || s.PPID != os.Getppid() || !s.Alive() || s.StartTime == 0 {
		t.Fatalf("ReadStat(self) = %+v", s)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The kernel truncates comm to 15 bytes.
	if want := filepath.Base(exe); len(want) > 15 && s.Comm != want[:15] || len(want) <= 15 && s.Comm != want {
		t.Errorf("Comm = %q, want %q", s.Comm, want)
	}
	pgrp, err := getpgrp()
	if err != nil {
		t.Fatal(err)
	}
	if s.PGRP != pgrp {
		t.Errorf("PGRP = %d, want %d", s.PGRP, pgrp)
	}

	// The same process read twice has the same identity.
	again, err := ReadStat(FS{Root: "/proc"}, os.Getpid())
	if err != nil || again.Identity() != s.Identity() {
		t.Fatalf("identity changed: %+v vs %+v (%v)", again.Identity(), s.Identity(), err)
	}

	link, err := FS{}.ReadLink("self")
	if err != nil || link != strconv.Itoa(os.Getpid()) {
		t.Errorf("ReadLink(self) = %q, %v", link, err)
	}
}

func TestListStatsReal(t *testing.T) {
	stats, err := ListStats(FS{})
	if err != nil {
		t.Fatal(err)
	}
	var self, parent bool
	for _, s := range stats {
		self = self || s.PID == os.Getpid()
		parent = parent || s.PID == os.Getppid()
	}
	if !self || !parent {
		t.Fatalf("ListStats missed self (%v) or parent (%v) among %d processes", self, parent, len(stats))
	}
}

func TestReadStatRealMissing(t *testing.T) {
	// Above PID_MAX_LIMIT (4194304), so it can never exist.
	if _, err := ReadStat(FS{}, 1<<23); !errors.Is(err, ErrNotFound) {
		t.Fatalf("ReadStat(missing) = %v; want ErrNotFound", err)
	}
}

func getpgrp() (int, error) { return syscall.Getpgid(0) }
