package linux

import (
	"errors"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
)

func TestCaughtSignals(t *testing.T) {
	// A handler installed here shows up in our own status.
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGUSR2)
	defer signal.Stop(c)
	set, err := CaughtSignals(FS{}, os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if set&(1<<(syscall.SIGUSR2-1)) == 0 {
		t.Fatalf("SigCgt %#x lacks SIGUSR2 after signal.Notify", set)
	}
	if _, err := CaughtSignals(FS{}, 1<<30); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing pid: %v, want ErrNotFound", err)
	}
	dir := t.TempDir()
	for pid, status := range map[string]string{
		"7": "Name:\tbash\nSigIgn:\t0000000000384004\nSigCgt:\t000000004b813efb\n",
		"8": "Name:\tx\nSigCgt:\tnot-hex\n",
		"9": "Name:\tx\n",
	} {
		if err := os.MkdirAll(filepath.Join(dir, pid), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, pid, "status"), []byte(status), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fix := FS{Root: dir}
	if set, err := CaughtSignals(fix, 7); err != nil || set != 0x4b813efb {
		t.Fatalf("fixture: %#x, %v", set, err)
	}
	for _, pid := range []int{8, 9} {
		if _, err := CaughtSignals(fix, pid); err == nil {
			t.Fatalf("pid %d: malformed status accepted", pid)
		}
	}
}
