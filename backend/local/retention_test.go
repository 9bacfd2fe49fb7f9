package local

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/record"
	"github.com/ptyactor/ptyactor/test/testkit"
	"github.com/rs/zerolog"
)

// oldRecord writes a closed record named name in dir, dated at.
func oldRecord(t *testing.T, dir, name string, at time.Time) {
	t.Helper()
	path := filepath.Join(dir, name)
	w, err := record.NewWriter(path, record.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(record.Event{Seq: 1, Kind: record.KindStart, Start: &record.Start{Session: name}}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, at, at); err != nil {
		t.Fatal(err)
	}
}

// spawnOn starts a real bash on b as session id, waits for its first
// prompt, and closes it when the test ends (a close before is a no-op).
func spawnOn(t *testing.T, b *Backend, id string) backend.Session {
	t.Helper()
	rec := &recorder{}
	bs, err := b.Spawn(testkit.Ctx(t), messages.SpawnSpec{SessionID: messages.SessionID(id)}, testkit.PTYConfig(), rec)
	if err != nil {
		t.Fatalf("Spawn: %v", err)
	}
	trackShell(bs.PID())
	t.Cleanup(func() { closeSession(t, bs) })
	waitPrompt(t, rec, 0)
	return bs
}

func closeSession(t *testing.T, bs backend.Session) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := bs.Close(ctx, "test ended"); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// records lists the record names in dir.
func records(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// recordOf is the name of session id's record in dir.
func recordOf(t *testing.T, dir, id string) string {
	t.Helper()
	for _, n := range records(t, dir) {
		if strings.HasPrefix(n, id+"-") {
			return n
		}
	}
	t.Fatalf("no record of %s in %v", id, records(t, dir))
	return ""
}

// With a folder cap smaller than any record, a session's open removes the
// closed records before it, never one this backend still writes (even
// one unwritten past record.UnclosedGrace), and its close removes its own
// once it is closed. What goes is logged.
func TestRecordFolderCap(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "recordings")
	if err := record.OpenDir(dir); err != nil {
		t.Fatal(err)
	}
	long := time.Now().Add(-3 * time.Hour)
	oldRecord(t, dir, "old1.rec", long)
	oldRecord(t, dir, "old2.rec", long.Add(time.Minute))
	logs := &testkit.LockedBuffer{}
	b := New(Options{Log: zerolog.New(logs), Record: Record{Dir: dir, MaxTotal: 1}})

	a := spawnOn(t, b, "first")
	nameA := recordOf(t, dir, "first")
	if got := records(t, dir); !slices.Equal(got, []string{nameA}) {
		t.Fatalf("after the first open: %v, want the old records gone", got)
	}
	for _, want := range []string{`"record":"old1.rec"`, `"record":"old2.rec"`, `"cap":"total"`} {
		if !strings.Contains(logs.String(), want) {
			t.Fatalf("the log lacks %s: %s", want, logs.String())
		}
	}
	// The first record, open, looks like a crashed writer's to anyone
	// but its backend.
	stale := time.Now().Add(-2 * record.UnclosedGrace)
	if err := os.Chtimes(filepath.Join(dir, nameA), stale, stale); err != nil {
		t.Fatal(err)
	}

	spawnOn(t, b, "second")
	nameB := recordOf(t, dir, "second")
	if got := records(t, dir); !slices.Equal(got, []string{nameA, nameB}) {
		t.Fatalf("after the second open: %v, want both open records", got)
	}

	closeSession(t, a)
	if got := records(t, dir); !slices.Equal(got, []string{nameB}) {
		t.Fatalf("after the first close: %v, want only the open %s", got, nameB)
	}
}
