//go:build linux || darwin

package teardown

import (
	"errors"
	"os/exec"
	"syscall"
	"testing"

	"github.com/ptyactor/ptyactor/probes/linux"
)

func TestProcSignaler(t *testing.T) {
	// On Linux Signal goes through a pidfd and kill is its fallback; on
	// macOS Signal is kill.
	for name, send := range map[string]func(ProcSignaler, linux.Identity, syscall.Signal) error{
		"Signal": ProcSignaler.Signal,
		"kill":   ProcSignaler.kill,
	} {
		t.Run(name, func(t *testing.T) {
			p := startProcess(t, exec.Command("sleep", "100"), "sleep")
			id := p.id
			s := ProcSignaler{}

			// Same pid, different start time: a recycled pid. Never signalled.
			reused := linux.Identity{PID: id.PID, StartTime: id.StartTime + 1}
			if err := send(s, reused, syscall.SIGKILL); !errors.Is(err, ErrGone) {
				t.Fatalf("Signal(reused) = %v; want ErrGone", err)
			}
			if quiet(id) {
				t.Fatal("process hit through a reused identity")
			}

			for _, pid := range []int{0, -1, -id.PID} {
				if err := send(s, linux.Identity{PID: pid, StartTime: id.StartTime}, syscall.SIGKILL); !errors.Is(err, ErrInvalidPID) {
					t.Fatalf("Signal(pid %d) = %v; want ErrInvalidPID", pid, err)
				}
			}

			if err := send(s, id, syscall.SIGKILL); err != nil {
				t.Fatalf("Signal: %v", err)
			}
			err := p.cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("Wait = %v; want killed by SIGKILL", err)
			}
			if err := send(s, id, syscall.SIGKILL); !errors.Is(err, ErrGone) {
				t.Fatalf("Signal(reaped) = %v; want ErrGone", err)
			}
		})
	}
}
