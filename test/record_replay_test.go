package test

import (
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/actors"
	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/backend/local"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/record"
	"github.com/ptyactor/ptyactor/record/replay"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// A recorded session replays: the screen rebuilt from the record at 20
// random event numbers has the hash the live screen read had at that
// number, through a shell, a python REPL, vim edited by keys and a
// resize; and the record's transcript (ptyrec cat) is the transcript read
// live. The same holds for a record whose oldest segments were cut, from
// its checkpoint on.
func TestRecordReplays(t *testing.T) {
	if _, err := exec.LookPath("vim"); err != nil {
		t.Skip("vim is not installed (test/deps.sh installs it)")
	}
	for _, c := range []struct {
		name     string
		maxBytes int64
	}{{"whole", 0}, {"cut", 24 << 10}} {
		t.Run(c.name, func(t *testing.T) { replaySession(t, c.maxBytes) })
	}
}

func replaySession(t *testing.T, maxBytes int64) {
	dir := filepath.Join(t.TempDir(), "recordings")
	svc := testkit.Service(t, testkit.ServiceOptions{Backends: []backend.Backend{
		local.New(local.Options{Record: local.Record{Dir: dir, MaxBytes: maxBytes}}),
	}})
	o := testkit.Owner(t, svc, "replayed")
	ctx := testkit.Ctx(t)
	sh, err := svc.Spawn(ctx, o, messages.SpawnRequest{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	live := map[uint64]string{} // a live screen's hash by the number it showed
	look := func() {
		t.Helper()
		sc, err := sh.Screen(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if h, ok := live[sc.Seq]; ok && h != sc.Hash {
			t.Fatalf("two screens at %d: %s and %s", sc.Seq, h, sc.Hash)
		}
		live[sc.Seq] = sc.Hash
	}
	send := func(req messages.SendRequest) {
		t.Helper()
		if _, err := sh.Send(ctx, req); err != nil {
			t.Fatalf("%+v: %v", req, err)
		}
		look()
	}
	line := func(text string) { send(messages.SendRequest{Text: text, Submit: true}) }
	keys := func(k ...string) { send(messages.SendRequest{Keys: k}) }

	if maxBytes > 0 {
		// Enough output that the record is cut (more than scrollback
		// holds, so the transcript is compared whole only).
		line("seq 1 1500 | sed 's/^/row /'")
	}
	line("echo hello; printf 'a\\tb\\n'; false")
	line("python3 -q")
	line("print(6 * 7)")
	line("exit()")
	line("vim -u NONE -N -n --cmd 'set ttimeout ttimeoutlen=10' notes.txt")
	send(messages.SendRequest{Text: "ihello from vim"})
	keys("Escape")
	if err := sh.Resize(ctx, 30, 100); err != nil {
		t.Fatal(err)
	}
	look()
	keys("Left", "Left")
	line(":wq")
	if err := sh.Resize(ctx, 24, 80); err != nil {
		t.Fatal(err)
	}
	look()
	line("echo done")
	// Output while the screen is read: numbers between the sends.
	op, err := sh.StartSend(ctx, messages.SendRequest{Text: "for i in $(seq 1 60); do echo tick $i; sleep 0.01; done", Submit: true})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		select {
		case <-op.Done():
			deadline = time.Time{}
			continue
		default:
		}
		look()
	}
	if _, err := op.Result(ctx); err != nil {
		t.Fatal(err)
	}
	look()

	var transcript string
	if maxBytes == 0 {
		transcript = readAll(t, sh)
	}
	report, err := sh.Close(ctx, "done")
	if err != nil || report.Recording == nil {
		t.Fatalf("close: %+v, %v", report, err)
	}
	path := report.Recording.Path
	open := func() *record.Reader {
		r, err := record.Open(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		return r
	}
	first, err := open().Next()
	if err != nil {
		t.Fatal(err)
	}
	if cut := first.Kind == record.KindCheckpoint; cut != (maxBytes > 0) {
		t.Fatalf("the record begins with %s (cap %d)", first.Kind, maxBytes)
	}
	var seqs []uint64
	for seq := range live {
		if seq >= first.Seq {
			seqs = append(seqs, seq)
		}
	}
	if len(seqs) < 20 {
		t.Fatalf("%d screens read live after event %d, want 20 at least", len(seqs), first.Seq)
	}
	slices.Sort(seqs)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 23))
	rng.Shuffle(len(seqs), func(i, j int) { seqs[i], seqs[j] = seqs[j], seqs[i] })
	for _, seq := range seqs[:20] {
		sc, at, err := replay.Screen(open(), seq)
		if err != nil || at != seq {
			t.Fatalf("replay at %d: at %d, %v", seq, at, err)
		}
		if sc.Hash != live[seq] {
			t.Fatalf("the screen at %d: replayed %s, live %s:\n%s", seq, sc.Hash, live[seq], strings.Join(sc.Rows, "\n"))
		}
	}
	if maxBytes > 0 {
		return // the transcript of a cut record starts at its cut
	}
	var cat strings.Builder
	if err := replay.Transcript(&cat, open()); err != nil {
		t.Fatal(err)
	}
	if cat.String() != transcript {
		got, want := strings.Split(cat.String(), "\n"), strings.Split(transcript, "\n")
		for i := range min(len(got), len(want)) {
			if got[i] != want[i] {
				t.Fatalf("ptyrec cat differs from the live transcript at line %d (%d and %d lines):\n%q\n%q", i, len(got), len(want), got[i], want[i])
			}
		}
		t.Fatalf("ptyrec cat has %d lines, the live transcript %d; the last: %q", len(got), len(want), got[len(got)-1])
	}
}

// readAll reads the whole transcript live, cursor read after cursor read:
// the final lines, then the lines on the screen.
func readAll(t *testing.T, sh *actors.Session) string {
	t.Helper()
	var b strings.Builder
	cursor := uint64(0)
	for {
		r, err := sh.Read(testkit.Ctx(t), messages.ReadRequest{Cursor: &cursor})
		if err != nil || r.OmittedTo > 0 {
			t.Fatalf("read from %d: %+v, %v", cursor, r, err)
		}
		b.WriteString(r.Text)
		if !r.More {
			return strings.TrimSuffix(b.String(), "\n") + "\n"
		}
		cursor = r.Cursor
	}
}
