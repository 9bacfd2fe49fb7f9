package linux

import (
	"os/exec"
	"testing"
)

// With a device identity, descriptors are matched by what they are, not
// by the name their link shows: the right identity proves the wait with no
// path at all, and a wrong one refuses it even when the path matches.
func TestTerminalMatchesByDeviceIdentity(t *testing.T) {
	t.Parallel()
	s := startPTY(t, nil, exec.Command(lookPath(t, "python3"), "-q"))
	g := s.waitFor("python3 at its prompt", waitingAs("python3", CallPselect6, CallSelect))
	dev, err := TerminalDevice(s.term.Paths[0])
	if err != nil {
		t.Fatal(err)
	}
	pid := s.cmd.Process.Pid
	byID := Terminal{Device: dev}
	if g2, err := ProbeGroup(FS{}, FS{}, s.arch, pid, g.Pgid, byID); err != nil {
		t.Fatal(err)
	} else if _, ok := g2.Waiting(); !ok {
		t.Fatalf("identity alone did not prove the wait: %+v", g2)
	}
	other := *dev
	other.Dev++ // the same pts number in another devpts instance
	wrong := Terminal{Paths: s.term.Paths, Device: &other}
	if g2, err := ProbeGroup(FS{}, FS{}, s.arch, pid, g.Pgid, wrong); err != nil {
		t.Fatal(err)
	} else if w, ok := g2.Waiting(); ok {
		t.Fatalf("another device's identity proved a wait: %+v", w)
	}
	w, _ := g.Waiting()
	f := NewFollower(s.arch, wrong)
	defer f.Close()
	f.Track(w)
	if tw, ok := f.Recheck(g.Pgid); ok {
		t.Fatalf("the follower matched by path over identity: %+v", tw)
	}
}
