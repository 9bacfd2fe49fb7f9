package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/ptyactor/ptyactor/messages"
)

func newTestPolicy(t *testing.T, s Settings) *Policy {
	t.Helper()
	if s.Root == "" {
		s.Root = t.TempDir()
	}
	p, err := NewPolicy(s)
	if err != nil {
		t.Fatalf("NewPolicy(%+v): %v", s, err)
	}
	return p
}

func TestNewPolicyDefaultsAndRoot(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	p, err := NewPolicy(Settings{Root: link})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := filepath.EvalSymlinks(real)
	if d := p.Defaults(); d.Mode != ReadOnly || d.Root != want {
		t.Fatalf("defaults %+v: want read-only and the root with links resolved (%s)", d, want)
	}
	r := p.Resolve(messages.NewOwner("a"), "pty-1")
	if r.Mode != ReadOnly || r.Root != want || r.Network || r.Session != "pty-1" {
		t.Fatalf("resolve: %+v", r)
	}

	t.Chdir(real)
	if p, err := NewPolicy(Settings{Mode: WorkspaceWrite}); err != nil || p.Defaults().Root != want {
		t.Fatalf("empty root: %v %+v, want the working directory %s", err, p, want)
	}

	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]Settings{
		"unknown mode": {Mode: "write-everything", Root: real},
		"root /":       {Root: "/"},
		"root a file":  {Root: file},
		"missing root": {Root: filepath.Join(dir, "missing")},
	} {
		if _, err := NewPolicy(s); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	if _, err := ParseMode("workspace-write"); err != nil {
		t.Fatal(err)
	}
	if _, err := ParseMode("full"); !errors.Is(err, ErrInvalid) {
		t.Fatalf("ParseMode(full): %v", err)
	}
}

func TestFence(t *testing.T) {
	p := newTestPolicy(t, Settings{Mode: WorkspaceWrite})
	a, b := messages.NewOwner("a"), messages.NewOwner("a") // same label, different owners

	l1 := p.Acquire(a, "pty-1")
	if l1.Mode != WorkspaceWrite || p.Sessions(a) != 1 || p.Sessions(b) != 0 {
		t.Fatalf("lease %+v, sessions a=%d b=%d", l1.Resolution, p.Sessions(a), p.Sessions(b))
	}
	err := p.SetMode(a, ReadOnly)
	var ce *ChangeRefusedError
	if !errors.Is(err, ErrChangeRefused) || !errors.As(err, &ce) || ce.From != "workspace-write" || ce.To != "read-only" || ce.Sessions != 1 {
		t.Fatalf("SetMode under a lease: %v", err)
	}
	const want = `cannot change sandbox mode from "workspace-write" to "read-only" while persistent terminal sessions are open or being created; wait for creation to settle and close them first`
	if err.Error() != want {
		t.Fatalf("text %q", err)
	}
	if p.Resolve(a, "").Mode != WorkspaceWrite {
		t.Fatal("a refused change took effect")
	}
	// No effective change: allowed under the lease, both spellings.
	if err := p.SetMode(a, WorkspaceWrite); err != nil {
		t.Fatal(err)
	}
	if err := p.SetMode(a, ""); err != nil {
		t.Fatal(err)
	}
	if err := p.SetMode(a, "bogus"); !errors.Is(err, ErrInvalid) {
		t.Fatalf("SetMode(bogus): %v", err)
	}
	// The network flag is fenced the same way.
	on, off := true, false
	if err := p.SetNetwork(a, &on); !errors.Is(err, ErrChangeRefused) || err.Error() != `cannot change sandbox network access from "denied" to "allowed" while persistent terminal sessions are open or being created; wait for creation to settle and close them first` {
		t.Fatalf("SetNetwork under a lease: %v", err)
	}
	if err := p.SetNetwork(a, &off); err != nil {
		t.Fatal(err)
	}
	// Another owner (even with the same label) is not fenced by a's lease.
	if err := p.SetMode(b, DangerFullAccess); err != nil {
		t.Fatal(err)
	}
	if err := p.SetNetwork(b, &on); err != nil {
		t.Fatal(err)
	}
	if r := p.Resolve(b, ""); r.Mode != DangerFullAccess || !r.Network {
		t.Fatalf("b resolves %+v", r)
	}

	// Two leases: releasing one (twice) keeps the fence up.
	l2 := p.Acquire(a, "pty-2")
	l1.Release()
	l1.Release()
	if p.Sessions(a) != 1 {
		t.Fatalf("sessions after a double release: %d, want 1", p.Sessions(a))
	}
	if err := p.SetMode(a, ReadOnly); !errors.Is(err, ErrChangeRefused) {
		t.Fatalf("SetMode with one lease left: %v", err)
	}
	l2.Release()
	if err := p.SetMode(a, ReadOnly); err != nil {
		t.Fatalf("SetMode after every release: %v", err)
	}
	if l := p.Acquire(a, "pty-3"); l.Mode != ReadOnly {
		t.Fatalf("new lease resolves %s", l.Mode)
	} else {
		l.Release()
	}
	var nilLease *Lease
	nilLease.Release()

	// Returning everyone to the defaults leaves no per-owner state behind.
	for _, o := range []messages.Owner{a, b} {
		if err := p.SetMode(o, ""); err != nil {
			t.Fatal(err)
		}
		if err := p.SetNetwork(o, nil); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(p.owners); n != 0 {
		t.Fatalf("%d owner entries left", n)
	}
}

// TestFenceConcurrent: whatever interleaving, a held lease's mode is the
// owner's effective mode for as long as it is held.
func TestFenceConcurrent(t *testing.T) {
	p := newTestPolicy(t, Settings{Mode: WorkspaceWrite})
	o := messages.NewOwner("o")
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		modes := []Mode{ReadOnly, WorkspaceWrite, DangerFullAccess}
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			err := p.SetMode(o, modes[i%3])
			if err != nil && !errors.Is(err, ErrChangeRefused) {
				t.Errorf("SetMode: %v", err)
				return
			}
		}
	}()
	errs := make(chan string, 4)
	var holders sync.WaitGroup
	for g := 0; g < 4; g++ {
		holders.Add(1)
		go func() {
			defer holders.Done()
			for i := 0; i < 500; i++ {
				l := p.Acquire(o, "s")
				if got := p.Resolve(o, "").Mode; got != l.Mode {
					errs <- "mode changed under a lease: " + string(l.Mode) + " -> " + string(got)
					l.Release()
					return
				}
				l.Release()
			}
		}()
	}
	holders.Wait()
	close(stop)
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if n := p.Sessions(o); n != 0 {
		t.Fatalf("%d leases left", n)
	}
}
