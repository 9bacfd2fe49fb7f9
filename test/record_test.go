package test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/backend/local"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/record"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// A recorded session, end to end: commands that exit 0, 1 and 3, a mark, a
// resize, a SIGINT, a secret typed at `read -s`, a token printed, a close.
// The close reports the record and its chain's end; the file is private,
// verifies to that end, and its export carries every send's exit code as
// the results did, the mark, the resize and the exit; neither the secret,
// nor the token, nor the marker's nonce is anywhere in it.
func TestRecordedSession(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "recordings")
	svc := testkit.Service(t, testkit.ServiceOptions{Backends: []backend.Backend{
		local.New(local.Options{Record: local.Record{Dir: dir, Host: "test-host"}}),
	}})
	o := testkit.Owner(t, svc, "recorded")
	ctx := testkit.Ctx(t)
	sh, err := svc.Spawn(ctx, o, messages.SpawnRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var codes []int
	for _, cmd := range []string{"true", "false", "(exit 3)"} {
		res, err := sh.Send(ctx, messages.SendRequest{Text: cmd, Submit: true})
		if err != nil || res.ExitCode == nil {
			t.Fatalf("%s: %+v, %v", cmd, res, err)
		}
		codes = append(codes, *res.ExitCode)
	}
	if _, err := sh.Mark(ctx, "tests start"); err != nil {
		t.Fatal(err)
	}
	if err := sh.Resize(ctx, 30, 100); err != nil {
		t.Fatal(err)
	}
	op, err := sh.StartSend(ctx, messages.SendRequest{Text: "sleep 30", Submit: true})
	if err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 10*time.Second, "sleep to run", func() bool {
		sc, err := sh.Screen(ctx)
		return err == nil && strings.Contains(strings.Join(sc.Rows, "\n"), "sleep 30")
	})
	if !op.Cancel() {
		t.Fatal("cancel refused")
	}
	if _, err := op.Result(ctx); err != nil {
		t.Fatal(err)
	}
	const secret = "correct-horse-battery"
	res, err := sh.Send(ctx, messages.SendRequest{Text: "read -rs pw; echo len-${#pw}", Submit: true})
	if err != nil || !res.Secret {
		t.Fatalf("read -s: %+v, %v; want a secret prompt", res, err)
	}
	if _, err := sh.Send(ctx, messages.SendRequest{Text: secret, Submit: true}); err != nil {
		t.Fatal(err)
	}
	const secret2 = "tr0ub4dor-and-3"
	res, err = sh.Send(ctx, messages.SendRequest{Text: `python3 -c "import getpass; print('plen', len(getpass.getpass('pw: ')))"`, Submit: true})
	if err != nil || !res.Secret {
		t.Fatalf("getpass: %+v, %v; want a secret prompt", res, err)
	}
	if res, err := sh.Send(ctx, messages.SendRequest{Text: secret2, Submit: true}); err != nil || !strings.Contains(res.Viewport, "plen 15") {
		t.Fatalf("after the getpass secret: %+v, %v", res, err)
	}
	const token = "ghp_0123456789abcdefghijklmn"
	if _, err := sh.Send(ctx, messages.SendRequest{Text: "echo " + token, Submit: true}); err != nil {
		t.Fatal(err)
	}
	report, err := sh.Close(ctx, "done")
	if err != nil {
		t.Fatal(err)
	}
	rec := report.Recording
	if rec == nil || rec.Host != "test-host" || rec.Records == 0 || len(rec.SHA256) != 64 || filepath.Dir(rec.Path) != dir {
		t.Fatalf("close's recording %+v", rec)
	}

	for path, want := range map[string]os.FileMode{dir: 0o700, rec.Path: 0o600} {
		if st, err := os.Stat(path); err != nil || st.Mode().Perm() != want {
			t.Fatalf("%s: mode %v (%v), want %v", path, st.Mode().Perm(), err, want)
		}
	}
	rep, err := record.VerifyFile(rec.Path, nil)
	if err != nil || !rep.Closed || rep.Records != rec.Records || rep.Last != rec.SHA256 {
		t.Fatalf("verify: %+v, %v; want closed with %d records ending %s", rep, err, rec.Records, rec.SHA256)
	}

	raw, err := os.ReadFile(rec.Path)
	if err != nil {
		t.Fatal(err)
	}
	for _, never := range []string{secret, secret2, token, "133;D"} {
		if i := bytes.Index(raw, []byte(never)); i >= 0 {
			around := bytes.ReplaceAll(raw[max(i-400, 0):min(i+100, len(raw))], []byte(never), []byte("<HERE>"))
			t.Fatalf("the record holds a secret (%d bytes) at <HERE>: %q", len(never), around)
		}
	}
	r, err := record.Open(rec.Path, nil)
	if err != nil {
		t.Fatal(err)
	}
	var cast bytes.Buffer
	if err := record.ExportV3(&cast, r); err != nil {
		t.Fatal(err)
	}
	var settles []string
	var marks, resizes, exits int
	sc := bufio.NewScanner(&cast)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev []any
		if json.Unmarshal(sc.Bytes(), &ev) != nil || len(ev) != 3 {
			continue // the header
		}
		code, data := ev[1].(string), ev[2].(string)
		switch {
		case code == "m" && strings.Contains(data, "exit "):
			settles = append(settles, data)
		case code == "m" && strings.Contains(data, "tests start"):
			marks++
		case code == "r" && data == "100x30":
			resizes++
		case code == "x":
			exits++
		}
	}
	for _, c := range codes {
		found := false
		for _, s := range settles {
			found = found || strings.Contains(s, "exit "+itoa(c))
		}
		if !found {
			t.Fatalf("no settle marker with exit %d in %q", c, settles)
		}
	}
	if marks != 1 || resizes != 1 {
		t.Fatalf("marks %d, resizes %d; want 1 each", marks, resizes)
	}
	if bytes.Contains(cast.Bytes(), []byte(secret)) || bytes.Contains(cast.Bytes(), []byte(token)) {
		t.Fatal("a secret reached the export")
	}

	// A flipped byte in the middle is found.
	mid := bytes.Index(raw[len(raw)/2:], []byte(`"seq"`)) + len(raw)/2
	raw[mid+7] ^= 1
	bad := filepath.Join(t.TempDir(), "bad.rec")
	if err := os.WriteFile(bad, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	var corrupt *record.CorruptError
	if _, err := record.VerifyFile(bad, nil); !errors.As(err, &corrupt) {
		t.Fatalf("verify of a flipped byte: %v, want *CorruptError", err)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// A sandboxed shell cannot see the records' folder, not even read-only:
// every session's record is there.
func TestRecordFolderHiddenFromTheSandbox(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bwrap is not installed (Debian: bubblewrap; Linux only)")
	}
	// Inside the workspace, which the sandbox binds writable (and outside
	// /tmp, which it replaces anyway).
	ws := t.TempDir()
	dir := filepath.Join(ws, "recordings")
	opts := local.Options{Record: local.Record{Dir: dir}}
	if err := opts.Confine("workspace-write", ws, false); err != nil {
		t.Fatal(err)
	}
	svc := testkit.Service(t, testkit.ServiceOptions{Backends: []backend.Backend{local.New(opts)}})
	o := testkit.Owner(t, svc, "sandboxed")
	ctx := testkit.Ctx(t)
	sh, err := svc.Spawn(ctx, o, messages.SpawnRequest{})
	if err != nil {
		t.Fatal(err)
	}
	// The host sees this session's own record in the folder.
	if names, err := os.ReadDir(dir); err != nil || len(names) == 0 {
		t.Fatalf("the host's view of %s: %v, %v", dir, names, err)
	}
	res, err := sh.Send(ctx, messages.SendRequest{Text: "echo n=$(ls -A " + dir + " | wc -l); cat " + dir + "/*.rec", Submit: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Viewport, "n=0") || !strings.Contains(res.Viewport, "No such file") || strings.Contains(res.Viewport, `"seq"`) {
		t.Fatalf("the sandbox sees the records: %q", res.Viewport)
	}
}
