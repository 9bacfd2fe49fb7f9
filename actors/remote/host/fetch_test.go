package host_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/record"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// fetchSessionEnv names the session the "fetch" scripted client asks for.
const fetchSessionEnv = "PTYACTOR_HOST_TEST_FETCH_SESSION"

// A client fetches the record of a session it closed on a host: the same
// bytes as the host's files (a capped record's segments, in order), in
// several pieces, and the copy verifies, ending at the hash and count the
// close reported. An unknown id is refused, and so is the record for
// another client (another process, its own client id).
func TestFetchRecordingFromAHost(t *testing.T) {
	if isolate(t) {
		return
	}
	dir := filepath.Join(t.TempDir(), "recordings")
	// Capped at 1 MiB (segments of 256 KiB): the output below (3 MB of
	// record) is cut, and what the cap keeps is at least one whole
	// segment and the current one, more than one piece of the fetch.
	h, svc, _, sh := spawnOnHost(t, "-record-dir", dir, "-record-max-bytes", "1048576")
	ctx := testkit.Ctx(t)
	if _, err := sh.Mark(ctx, "before the flood"); err != nil {
		t.Fatal(err)
	}
	if res, err := sh.Send(ctx, messages.SendRequest{Text: "seq 1 300000", Submit: true}); err != nil || res.ExitCode == nil || *res.ExitCode != 0 {
		t.Fatalf("seq: %+v, %v", res, err)
	}
	rep, err := sh.Close(ctx, "test")
	if err != nil || rep.Recording == nil {
		t.Fatalf("close: %+v, %v", rep, err)
	}
	segs, err := record.Segments(rep.Recording.Path)
	if err != nil {
		t.Fatal(err)
	}
	var want []byte
	for _, p := range segs {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, b...)
	}
	if len(segs) < 2 || len(want) <= 256<<10 {
		t.Fatalf("the record is %d bytes in %d segments; the test wants several of each", len(want), len(segs))
	}

	var got bytes.Buffer
	rec, err := rc(svc).FetchRecording(ctx, "h0", sh.ID(), &got)
	if err != nil {
		t.Fatal(err)
	}
	if rec != *rep.Recording {
		t.Fatalf("fetched %+v; the close reported %+v", rec, *rep.Recording)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("fetched %d bytes, not the host's %d", got.Len(), len(want))
	}
	copyPath := filepath.Join(t.TempDir(), filepath.Base(rec.Path))
	if err := os.WriteFile(copyPath, got.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	vr, err := record.VerifyFile(copyPath, nil)
	if err != nil || !vr.Closed || vr.Last != rep.Recording.SHA256 || vr.Records != rep.Recording.Records {
		t.Fatalf("verify the copy: %+v, %v; the close reported %+v", vr, err, *rep.Recording)
	}
	// Fetched twice: the host keeps it for the client.
	if _, err := rc(svc).FetchRecording(ctx, "h0", sh.ID(), &bytes.Buffer{}); err != nil {
		t.Fatalf("second fetch: %v", err)
	}

	if _, err := rc(svc).FetchRecording(ctx, "h0", "pty-nope", &bytes.Buffer{}); !errors.Is(err, messages.ErrNoRecording) {
		t.Fatalf("an unknown id: %v, want ErrNoRecording", err)
	}
	if _, err := rc(svc).FetchRecording(ctx, "h1", sh.ID(), &bytes.Buffer{}); !errors.Is(err, messages.ErrNoHost) {
		t.Fatalf("an unknown host: %v, want ErrNoHost", err)
	}
	other := startClient(t, h, "fetch", fetchSessionEnv+"="+string(sh.ID()))
	if v := other.waitFact(t, "fetch"); v != "norecording" {
		t.Fatalf("another client's fetch: %q, want norecording", v)
	}
}
