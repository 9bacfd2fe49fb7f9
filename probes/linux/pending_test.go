package linux

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// PendingSignals joins what kill(2) queued for the process (ShdPnd, where a
// group signal waits) with what waits for its main thread (SigPnd).
func TestPendingSignals(t *testing.T) {
	dir := t.TempDir()
	for pid, status := range map[string]string{
		"7": "Name:\tbash\nSigPnd:\t0000000000000100\nShdPnd:\t0000000000000002\nSigBlk:\t0000000000000000\n",
		"8": "Name:\tx\nSigPnd:\t0000000000000000\nShdPnd:\tnot-hex\n",
		"9": "Name:\tx\nShdPnd:\t0000000000000000\n",
	} {
		if err := os.MkdirAll(filepath.Join(dir, pid), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, pid, "status"), []byte(status), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fix := FS{Root: dir}
	if set, err := PendingSignals(fix, 7); err != nil || set != 0x102 {
		t.Fatalf("fixture: %#x, %v, want SIGINT (shared) and SIGKILL (thread), 0x102", set, err)
	}
	for _, pid := range []int{8, 9} {
		if _, err := PendingSignals(fix, pid); err == nil {
			t.Fatalf("pid %d: malformed status accepted", pid)
		}
	}
	if _, err := PendingSignals(FS{}, 1<<30); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing pid: %v, want ErrNotFound", err)
	}
}
