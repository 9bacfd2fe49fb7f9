package mcpserver

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/test/testkit"
)

// A gate holds a terminal command until the test lets it go: the command
// runs `read _ < GATE` (GATE a FIFO from newGate), which blocks in open
// until openGate opens the FIFO's other end. A window the test needs (a
// task still running, a wait still waiting) then lasts until the test
// ends it, however slow the machine.

// newGate makes the FIFO in a temporary directory and returns its path.
func newGate(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "gate")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// openGate lets the command blocked on the gate go on: once the command
// has the FIFO open for reading (open for writing without blocking fails
// with ENXIO until then), it writes a line and closes it.
func openGate(t *testing.T, path string) {
	t.Helper()
	var f *os.File
	testkit.WaitFor(t, 20*time.Second, "a reader on the gate "+path, func() bool {
		var err error
		f, err = os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err != nil && !errors.Is(err, syscall.ENXIO) {
			t.Fatalf("open the gate: %v", err)
		}
		return err == nil
	})
	defer f.Close()
	if _, err := f.WriteString("go\n"); err != nil {
		t.Fatalf("open the gate: %v", err)
	}
}
