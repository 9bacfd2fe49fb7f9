package adversarial

import (
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptyactor/ptyactor/test/testkit"
)

// A home outside /tmp: the sandbox replaces /tmp with a tmpfs of its own,
// where anything can be made and nothing of the host shows, so a home
// under t.TempDir() would hide both defects these cases attack. Under
// /var/tmp the home is on the root file system, which the sandbox binds
// read-only, as a person's real home is.
func outsideHome(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/var/tmp", "ptyactor-adversarial-home-")
	if err != nil {
		t.Fatalf("a home outside /tmp: %v", err)
	}
	// Registered before the server starts, so it runs after its stop.
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// homeEnv points the server's HOME at home; state, when not "", is its
// XDG_STATE_HOME ("" leaves it unset, so ~/.local/state).
func homeEnv(home, state string) []string {
	return []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_STATE_HOME=" + state,
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"), "XDG_DATA_HOME=" + filepath.Join(home, ".local", "share")}
}

// A newcomer's first HTTP session starts in every sandbox mode, on a
// fresh home (no ~/.local/state yet) and with an XDG_STATE_HOME whose
// folders do not exist. Before, over -http, every terminal_open of a
// restricted mode failed: the console's folder was on the sandbox's hide
// list but never created, and bwrap could not make it in the read-only
// root ("Can't mkdir …/ptyactor/console: Read-only file system", or
// "Can't mkdir parents" under a custom XDG_STATE_HOME).
func TestHTTPSessionStartsInEverySandboxModeOnAFreshHome(t *testing.T) {
	for _, mode := range []string{"read-only", "workspace-write", "danger-full-access"} {
		for _, home := range []string{"fresh home", "custom XDG_STATE_HOME"} {
			t.Run(mode+"/"+home, func(t *testing.T) {
				h := outsideHome(t)
				state := ""
				if home == "custom XDG_STATE_HOME" {
					state = filepath.Join(h, "custom", "state")
				}
				s := Start(t, Options{Args: []string{"-sandbox", mode}, Env: homeEnv(h, state)})
				c := s.MCP()
				id := c.Open()
				if r := c.Send(id, "echo started-$((6*7))"); !strings.Contains(r.Text, "started-42") {
					t.Fatalf("send: %q", r.Text)
				}
			})
		}
	}
}

// No file a flag names as a credential is readable from a sandboxed
// terminal: the bearer token (here in its default place,
// ~/.config/ptymcp-http-token, and also the console's operator login),
// the TLS private key, the records' chain key. Before, a workspace-write
// terminal read the token with cat, and it came back in the tool result,
// to the model. The certificate, no secret, next to the key stays
// readable: the terminal does see that folder.
func TestHTTPCredentialFilesHiddenFromSandbox(t *testing.T) {
	for _, mode := range []string{"workspace-write", "read-only"} {
		t.Run(mode, func(t *testing.T) {
			h := outsideHome(t)
			keys := filepath.Join(h, "keys")
			if err := os.Mkdir(keys, 0o700); err != nil {
				t.Fatal(err)
			}
			cert, key, pool := testkit.SelfSignedCert(t, keys)
			var kb [32]byte
			_, _ = rand.Read(kb[:])
			recordKey, recordFile := hex.EncodeToString(kb[:]), filepath.Join(keys, "record.key")
			if err := os.WriteFile(recordFile, []byte(recordKey+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			s := Start(t, Options{DefaultTokenFile: true, Env: homeEnv(h, ""), Args: []string{"-sandbox", mode,
				"-http-tls-cert", cert, "-http-tls-key", key, "-record-key", recordFile}})
			s.Pool, s.tr.TLSClientConfig = pool, &tls.Config{RootCAs: pool}
			if want := filepath.Join(h, ".config", "ptymcp-http-token"); s.TokenFile != want {
				t.Fatalf("token file %s, want %s", s.TokenFile, want)
			}
			pemKey, err := os.ReadFile(key)
			if err != nil {
				t.Fatal(err)
			}
			keyLine := strings.Split(string(pemKey), "\n")[1] // the first line of the key's base64
			c := s.MCP()
			id := c.Open()
			if r := c.Send(id, "cat "+cert); !strings.Contains(r.Text, "BEGIN CERTIFICATE") {
				t.Fatalf("the certificate beside the key is not readable: %q", r.Text)
			}
			for _, f := range []struct{ what, path, secret string }{
				{"the bearer token", s.TokenFile, s.Token},
				{"the token, through ~", "~/.config/ptymcp-http-token", s.Token},
				{"the TLS key", key, keyLine},
				{"the record key", recordFile, recordKey},
			} {
				r := c.Send(id, "cat "+f.path+"; echo read-done")
				if !strings.Contains(r.Text, "read-done") {
					t.Fatalf("%s: the read did not finish: %q", f.what, r.Text)
				}
				if strings.Contains(r.Text, f.secret) {
					t.Fatalf("%s (%s) read from a %s terminal: %q", f.what, f.path, mode, r.Text)
				}
				t.Logf("%s: %q", f.what, strings.TrimSpace(r.Text))
			}
		})
	}
}
