package terminals

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/rs/zerolog"
)

// The folders to hide are created (0700, parents too) before any shell
// starts: bwrap could not make one in the read-only root, and one made
// later would show to the shells already running. The files are made
// absolute, -record-key's among them.
func TestHiddenCreatesFolders(t *testing.T) {
	base := t.TempDir()
	console := filepath.Join(base, "custom", "state", "ptyactor", "console")
	t.Chdir(base)
	f := &Flags{Hide: []string{console}, HideFiles: []string{"token", ""}, RecordKey: "record.key"}
	got := f.hidden(zerolog.Nop())
	want := []string{console, filepath.Join(base, "token"), filepath.Join(base, "record.key")}
	if !slices.Equal(got, want) {
		t.Fatalf("hidden: %q, want %q", got, want)
	}
	fi, err := os.Stat(console)
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Fatalf("the console's folder: %v %v", fi, err)
	}
	if len(f.HideFiles) != 2 {
		t.Fatalf("hidden changed HideFiles: %q", f.HideFiles)
	}
}
