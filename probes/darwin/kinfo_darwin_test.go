//go:build darwin

package darwin

import (
	"errors"
	"os"
	"os/exec"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestReadKinfoSelf(t *testing.T) {
	self, err := ReadKinfo(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	sid, err := unix.Getsid(0)
	if err != nil {
		t.Fatal(err)
	}
	pgid, err := unix.Getpgid(0)
	if err != nil {
		t.Fatal(err)
	}
	if self.PID != os.Getpid() || self.PPID != os.Getppid() || self.SID != sid || self.PGID != pgid ||
		!self.Alive() || self.Comm == "" || self.Start.IsZero() || self.Start.After(time.Now()) {
		t.Fatalf("self = %+v (sid %d, pgid %d)", self, sid, pgid)
	}
	again, err := ReadKinfo(os.Getpid())
	if err != nil || !again.Start.Equal(self.Start) {
		t.Fatalf("second read = %+v, %v; the start time must not move", again, err)
	}

	all, err := ListKinfo()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range all {
		if k.PID == self.PID {
			if k.PPID != self.PPID || k.SID != self.SID || !k.Start.Equal(self.Start) {
				t.Fatalf("listed self = %+v; read %+v", k, self)
			}
			return
		}
	}
	t.Fatalf("own pid %d missing from %d processes", self.PID, len(all))
}

func TestReadKinfoZombieAndGone(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "exit 0")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	first, err := ReadKinfo(pid)
	if err != nil {
		_ = cmd.Wait()
		t.Fatal(err)
	}
	// Not reaped yet: the child stays listed, as a zombie.
	deadline := time.Now().Add(10 * time.Second)
	for {
		k, err := ReadKinfo(pid)
		if err != nil {
			_ = cmd.Wait()
			t.Fatalf("unreaped child: %v", err)
		}
		if k.Stat == SZOMB {
			if k.Alive() || !k.Start.Equal(first.Start) {
				t.Errorf("zombie = %+v; first read %+v", k, first)
			}
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Wait()
			t.Fatalf("child never became a zombie: %+v", k)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	// Reaped: gone, unless the pid already names another process.
	if k, err := ReadKinfo(pid); !errors.Is(err, ErrNotFound) && (err != nil || k.Start.Equal(first.Start)) {
		t.Fatalf("reaped child = %+v, %v; want ErrNotFound", k, err)
	}
}
