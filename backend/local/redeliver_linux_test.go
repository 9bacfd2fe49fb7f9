//go:build linux

package local

import (
	"testing"
	"time"

	linux "github.com/ptyactor/ptyactor/probes/linux"
	"github.com/ptyactor/ptyactor/test/testkit"
	"golang.org/x/sys/unix"
)

// A forked child whose handlers no longer match the shell's but that still
// catches SIGINT (bash's child halfway through restoring the defaults
// before its exec) takes the signal in the shell's handler and goes on to
// exec its command: the program must get the signal all the same. Here the
// child swallows SIGINT and then execs sleep, which only a second SIGINT
// kills (found by TestCancelWhileCommandStarts under load: yes ran on).
func TestSignalReachesTheProgramExecedAfterTheShellsHandler(t *testing.T) {
	s, child := forkingParent(t, `
		signal.signal(signal.SIGUSR1, signal.SIG_DFL)
		got = []
		signal.signal(signal.SIGINT, lambda *a: got.append(1))
		os.setpgid(0, 0)
		os.write(1, b"ready\n")
		while not got: time.sleep(0.001)
		os.execvp("sleep", ["sleep", "30"])`, true)
	s.slave.fd = -1 // no terminal to flush
	if _, err := s.signalGroup(child, unix.SIGINT); err != nil {
		t.Fatalf("signalGroup: %v", err)
	}
	// The python child cannot die of SIGINT (its handler swallows it), so
	// only the sleep it exec'd can, of a second one.
	testkit.WaitFor(t, 10*time.Second, "the exec'd sleep to die of SIGINT", func() bool {
		st, err := linux.ReadStat(linux.FS{}, child)
		return err != nil || !st.Alive()
	})
}

// A child of the shell that takes the signal in handlers of its own and
// runs on without an exec (a subshell whose command survived ^C) is not
// signalled again: the second SIGINT would kill it here.
func TestSignalDoesNotRepeatForASurvivorThatNeverExecs(t *testing.T) {
	s, child := forkingParent(t, `
		signal.signal(signal.SIGINT, lambda *a: signal.signal(signal.SIGINT, signal.SIG_DFL))
		os.setpgid(0, 0)
		os.write(1, b"ready\n")
		time.sleep(30)`, true)
	s.slave.fd = -1
	start := time.Now()
	if _, err := s.signalGroup(child, unix.SIGINT); err != nil {
		t.Fatalf("signalGroup: %v", err)
	}
	if took := time.Since(start); took > 3*execWait {
		t.Fatalf("signalGroup took %v, want at most the two execWait bounds", took)
	}
	st, err := linux.ReadStat(linux.FS{}, child)
	if err != nil || !st.Alive() {
		t.Fatalf("the child that took one SIGINT and never exec'd was signalled again (stat %+v, %v)", st, err)
	}
}
