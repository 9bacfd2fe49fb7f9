package terminals

import (
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/ptyactor/ptyactor/record"
)

func parse(t *testing.T, args ...string) (*Flags, error) {
	t.Helper()
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := &Flags{}
	f.Register(fs)
	if err := fs.Parse(append([]string{"-workspace", t.TempDir()}, args...)); err != nil {
		t.Fatal(err)
	}
	return f, f.Check()
}

// Records go under XDG_STATE_HOME by default, in a private folder; a
// folder others can use, a key file others can read, and a key without
// records are refused; off records nothing.
func TestRecordFlags(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	f, err := parse(t)
	if err != nil || f.RecordDir != filepath.Join(state, "ptyactor", "recordings") || f.recording().Dir != f.RecordDir {
		t.Fatalf("default: %q, %v", f.RecordDir, err)
	}
	if st, err := os.Stat(f.RecordDir); err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("the default folder: %v, %v; want 0700", st, err)
	}
	if f, err := parse(t, "-record-dir", "off"); err != nil || f.recording().Dir != "" {
		t.Fatalf("off: %+v, %v", f.recording(), err)
	}
	open := filepath.Join(t.TempDir(), "open")
	if err := os.Mkdir(open, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := parse(t, "-record-dir", open); !errors.Is(err, record.ErrPermissive) {
		t.Fatalf("a 0755 folder: %v, want ErrPermissive", err)
	}
	key := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(key, []byte("0123456789abcdef0123456789abcdef"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := parse(t, "-record-key", key); !errors.Is(err, record.ErrPermissive) {
		t.Fatalf("a 0644 key file: %v, want ErrPermissive", err)
	}
	if err := os.Chmod(key, 0o600); err != nil {
		t.Fatal(err)
	}
	if f, err := parse(t, "-record-key", key); err != nil || len(f.recording().Key) == 0 {
		t.Fatalf("a 0600 key file: %v", err)
	}
	if _, err := parse(t, "-record-dir", "off", "-record-key", key); err == nil {
		t.Fatal("a key without records accepted")
	}
}
