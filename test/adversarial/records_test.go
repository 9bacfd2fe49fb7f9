package adversarial

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/tools"
)

// A keyed record (-record-key) of a session the console watched and
// shared, tampered with as one who can write the record folder but has
// not the key would: ptyrec verify -key names the first bad record for a
// flipped byte, a removed middle line, two lines swapped, a forged event
// whose chain was recomputed as plain SHA-256 (without the key), and
// says a record whose last line was cut (or cut mid-line) is incomplete,
// naming the last record that verifies. The intact one verifies, closed
// and keyed. No token, cookie or link token is in any record.
func TestRecordTampering(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "record.key")
	var key [32]byte
	_, _ = rand.Read(key[:])
	if err := os.WriteFile(keyFile, []byte(hex.EncodeToString(key[:])+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := Start(t, Options{Args: []string{"-record-key", keyFile}})
	c := s.MCP()
	id := c.Open()
	cookie := s.Login()
	share, _ := c.Share(id, map[string]any{"label": "records"})
	v, err := s.Watch(ctx(t), id, share, DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	text, _ := v.Drain(ctx(t))
	for i := range 6 {
		c.Send(id, "echo line-"+strconv.Itoa(i)+"-$((i=i+1))")
	}
	waitFor(t, 15*time.Second, "the viewer sees the last line", func() bool { return strings.Contains(text(), "line-5-") })
	c.OK(tools.TerminalClose, map[string]any{"sessionId": id})

	var rec string
	waitFor(t, 20*time.Second, "the session's closed record", func() bool {
		m, _ := filepath.Glob(filepath.Join(s.StateHome, "ptyactor", "recordings", id+"*.rec"))
		if len(m) != 1 {
			return false
		}
		rec = m[0]
		out, _ := verify(t, rec, keyFile)
		return strings.Contains(out, "closed keyed")
	})
	orig, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{s.Token, cookie.Value, share} {
		if bytes.Contains(orig, []byte(secret)) {
			t.Errorf("a credential (%d bytes) is in the record", len(secret))
		}
	}
	lines := bytes.SplitAfter(orig, []byte("\n"))
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	n := len(lines)
	if n < 10 {
		t.Fatalf("the record has %d lines", n)
	}
	mid := n / 2 // a record numbered mid+1
	dir := t.TempDir()
	write := func(name string, ls [][]byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, bytes.Join(ls, nil), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	clone := func() [][]byte {
		out := make([][]byte, n)
		for i, l := range lines {
			out[i] = bytes.Clone(l)
		}
		return out
	}

	flipped := clone()
	flipped[mid][len(flipped[mid])-4] ^= 0x01 // inside the event, before its closing braces
	removed := append(clone()[:mid:mid], clone()[mid+1:]...)
	swapped := clone()
	swapped[mid], swapped[mid+1] = swapped[mid+1], swapped[mid]
	cutLast := clone()[:n-1]
	cutMid := clone()
	cutMid[n-1] = cutMid[n-1][:len(cutMid[n-1])/2]
	forged := forge(t, clone(), mid)

	for _, tc := range []struct {
		what, file, want string
	}{
		{"a flipped byte", write("flipped.rec", flipped), "corrupt at record " + strconv.Itoa(mid+1)},
		{"a removed middle line", write("removed.rec", removed), "corrupt at record " + strconv.Itoa(mid+1)},
		{"two lines swapped", write("swapped.rec", swapped), "corrupt at record " + strconv.Itoa(mid+1)},
		{"a forged chain recomputed without the key", write("forged.rec", forged), "corrupt at record " + strconv.Itoa(mid+1)},
		{"the last line cut", write("cut.rec", cutLast), "incomplete at record " + strconv.Itoa(n-1)},
		{"the last line cut mid-line", write("cutmid.rec", cutMid), "incomplete at record " + strconv.Itoa(n-1)},
	} {
		out, code := verify(t, tc.file, keyFile)
		if code != 1 || !strings.Contains(out, tc.want) {
			t.Errorf("%s: exit %d %q; want exit 1 saying %q", tc.what, code, out, tc.want)
		}
	}
	// Without the key a keyed record is not verified at all (a forger
	// cannot make ptyrec pass it by leaving the key out).
	if out, code := verify(t, rec, ""); code != 1 || !strings.Contains(out, "keyed") {
		t.Errorf("the keyed record without -key: exit %d %q", code, out)
	}
	// And the intact one still verifies.
	if out, code := verify(t, rec, keyFile); code != 0 || !strings.Contains(out, "ok: "+strconv.Itoa(n)+" records, closed keyed") {
		t.Errorf("the intact record: exit %d %q", code, out)
	}
	// The export holds no credential either.
	out, err := exec.Command(ptyrecBin(t), "export", "-key", keyFile, rec).CombinedOutput()
	if err != nil {
		t.Fatalf("export: %v\n%s", err, out)
	}
	for _, secret := range []string{s.Token, cookie.Value, share} {
		if bytes.Contains(out, []byte(secret)) {
			t.Errorf("a credential is in the export")
		}
	}
}

// forge changes record at (0-based) i's event and recomputes the chain
// from there as a plain SHA-256 chain, as one without the key would:
// each hash is SHA-256(the previous hash as stored || the event bytes).
func forge(t *testing.T, ls [][]byte, i int) [][]byte {
	t.Helper()
	const prefix, middle = `{"h":"`, `","e":`
	prev, err := hex.DecodeString(string(ls[i-1][len(prefix) : len(prefix)+64]))
	if err != nil {
		t.Fatal(err)
	}
	for j := i; j < len(ls); j++ {
		e := ls[j][len(prefix)+64+len(middle) : len(ls[j])-2] // without "}\n"
		if j == i {
			edited := bytes.Replace(e, []byte(`":`), []byte(`": `), 1) // an edit that keeps it JSON
			if bytes.Equal(edited, e) {
				t.Fatalf("nothing to forge in %q", e)
			}
			e = edited
		}
		h := sha256.New()
		h.Write(prev)
		h.Write(e)
		prev = h.Sum(nil)
		ls[j] = []byte(prefix + hex.EncodeToString(prev) + middle + string(e) + "}\n")
	}
	return ls
}

// verify runs ptyrec verify (with -key when keyFile is not "") and
// returns its output and exit code.
func verify(t *testing.T, file, keyFile string) (string, int) {
	t.Helper()
	args := []string{"verify"}
	if keyFile != "" {
		args = append(args, "-key", keyFile)
	}
	out, err := exec.Command(ptyrecBin(t), append(args, file)...).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), ee.ExitCode()
	}
	if err != nil {
		t.Fatalf("ptyrec: %v", err)
	}
	return string(out), 0
}
