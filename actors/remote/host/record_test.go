package host_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/record"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// A host killed with SIGKILL mid-session leaves a record that reads as
// incomplete (never corrupt), verifies up to its last whole record, and
// holds every send it settled: each settle reached the file before the
// client had its result. The file lives on the host and names the session
// by the client's id.
func TestRecordSurvivesAHostKilledMidSession(t *testing.T) {
	if isolate(t) {
		return
	}
	dir := filepath.Join(t.TempDir(), "recordings")
	h, _, _, sh := spawnOnHost(t, "-record-dir", dir)
	ctx := testkit.Ctx(t)
	want := map[int]bool{}
	for _, cmd := range []string{"true", "(exit 3)", "(exit 7)"} {
		res, err := sh.Send(ctx, messages.SendRequest{Text: cmd, Submit: true})
		if err != nil || res.ExitCode == nil {
			t.Fatalf("%s: %+v, %v", cmd, res, err)
		}
		want[*res.ExitCode] = true
	}
	h.Kill(t)

	files, err := filepath.Glob(filepath.Join(dir, "*.rec"))
	if err != nil || len(files) != 1 {
		t.Fatalf("records on the host: %v, %v", files, err)
	}
	rep, err := record.VerifyFile(files[0], nil)
	var incomplete *record.IncompleteError
	if !errors.As(err, &incomplete) || incomplete.Verified == 0 || rep.Closed {
		t.Fatalf("verify after SIGKILL: %+v, %v; want incomplete after some records", rep, err)
	}
	r, err := record.Open(files[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got := map[int]bool{}
	var session string
	for {
		ev, err := r.Next()
		if err != nil {
			break
		}
		if ev.Kind == record.KindStart {
			session = ev.Start.Session
		}
		if ev.Kind == record.KindSettle && ev.Settle.ExitCode != nil {
			got[*ev.Settle.ExitCode] = true
		}
	}
	for code := range want {
		if !got[code] {
			t.Fatalf("settled with exit %d, not in the record (%v)", code, got)
		}
	}
	if session != string(sh.ID()) {
		t.Fatalf("the record names session %q; the client knows it as %q", session, sh.ID())
	}
	if st, err := os.Stat(files[0]); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("record mode: %v, %v", st, err)
	}
}

// A mark through a host lands in the host's record, with the number the
// mark got in the session's stream; the host checks its label, and its
// refusal keeps its type across the wire.
func TestMarkThroughAHost(t *testing.T) {
	if isolate(t) {
		return
	}
	dir := filepath.Join(t.TempDir(), "recordings")
	_, _, _, sh := spawnOnHost(t, "-record-dir", dir)
	ctx := testkit.Ctx(t)
	seq, err := sh.Mark(ctx, "tests start")
	if err != nil || seq == 0 {
		t.Fatalf("mark: %d, %v", seq, err)
	}
	if _, err := sh.Mark(ctx, "bad\x00label"); !errors.Is(err, messages.ErrInvalidArgument) {
		t.Fatalf("mark with a NUL: %v, want ErrInvalidArgument", err)
	}
	rep, err := sh.Close(ctx, "test")
	if err != nil || rep.Recording == nil {
		t.Fatalf("close: %+v, %v", rep, err)
	}
	if _, err := sh.Mark(ctx, "after"); !errors.Is(err, messages.ErrNoSession) {
		t.Fatalf("mark after close: %v, want ErrNoSession", err)
	}

	r, err := record.Open(rep.Recording.Path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var marks []record.Event
	for {
		ev, err := r.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatalf("read the record: %v", err)
			}
			break
		}
		if ev.Kind == record.KindMark {
			marks = append(marks, ev)
		}
	}
	if len(marks) != 1 || marks[0].Data != "tests start" || marks[0].Seq != seq || marks[0].Source != record.SourceAgent {
		t.Fatalf("marks in the record: %+v; want one \"tests start\" at seq %d", marks, seq)
	}
}
