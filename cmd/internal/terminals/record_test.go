package terminals

import (
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// The folder's caps default to 1 GiB and 30 days and reach the backend;
// 0 turns one off, and a negative cap is refused.
func TestRecordFolderCapFlags(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	f, err := parse(t)
	if err != nil {
		t.Fatal(err)
	}
	if rc := f.recording(); rc.MaxTotal != 1<<30 || rc.MaxAge != 720*time.Hour {
		t.Fatalf("defaults: total %d, age %v", rc.MaxTotal, rc.MaxAge)
	}
	f, err = parse(t, "-record-max-total", "0", "-record-max-age", "36h")
	if rc := f.recording(); err != nil || rc.MaxTotal != 0 || rc.MaxAge != 36*time.Hour {
		t.Fatalf("set: %+v, %v", rc, err)
	}
	for _, args := range [][]string{{"-record-max-total", "-1"}, {"-record-max-age", "-1h"}} {
		if _, err := parse(t, args...); err == nil || !strings.Contains(err.Error(), args[0]) {
			t.Fatalf("%v: %v, want an error naming the flag", args, err)
		}
	}
}
