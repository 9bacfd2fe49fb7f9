package mcpserver

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/ptyactor/ptyactor/test/testkit"
	"github.com/ptyactor/ptyactor/tools"
	"github.com/rs/zerolog"
)

// Every method needs the token; a missing, wrong or same-length wrong
// token is 401 with a one-line reason and a Bearer challenge; the right
// one is served. The token is never logged.
func TestHTTPBearerToken(t *testing.T) {
	s := httpServer(t)
	if len(s.token) != 43 {
		t.Fatalf("generated token %d characters, want 43 (32 bytes, base64url)", len(s.token))
	}
	st, err := os.Stat(s.tokenFile)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v", st.Mode(), err)
	}
	sameLength := []byte(s.token)
	sameLength[len(sameLength)/2] ^= 1 // still a base64url letter or digit
	for _, tc := range []struct {
		what, auth, prefix, challenge string
	}{
		{"no token", "", "unauthorized: send Authorization: Bearer <token>", `Bearer realm="ptymcp"`},
		{"wrong token", "Bearer " + strings.Repeat("x", minTokenLen), "unauthorized: wrong bearer token", `Bearer realm="ptymcp", error="invalid_token"`},
		{"same length", "Bearer " + string(sameLength), "unauthorized: wrong bearer token", `Bearer realm="ptymcp", error="invalid_token"`},
		{"prefix", "Bearer " + s.token[:len(s.token)-1], "unauthorized: wrong bearer token", `Bearer realm="ptymcp", error="invalid_token"`},
		{"longer", "Bearer " + s.token + "x", "unauthorized: wrong bearer token", `Bearer realm="ptymcp", error="invalid_token"`},
		{"empty bearer", "Bearer", "unauthorized: wrong bearer token", `Bearer realm="ptymcp", error="invalid_token"`},
		{"basic", "Basic " + s.token, "unauthorized: the Authorization header is not a Bearer token", `Bearer realm="ptymcp"`},
	} {
		var hdr []string
		if tc.auth != "" {
			hdr = []string{"Authorization", tc.auth}
		}
		r := s.post(t, initBody, hdr...)
		oneLine(t, tc.what, r, http.StatusUnauthorized, tc.prefix)
		if got := r.header.Get("WWW-Authenticate"); got != tc.challenge {
			t.Fatalf("%s: WWW-Authenticate %q, want %q", tc.what, got, tc.challenge)
		}
		if r.header.Get("Mcp-Session-Id") != "" {
			t.Fatalf("%s: a session was opened", tc.what)
		}
	}
	oneLine(t, "two Authorization headers", s.post(t, initBody, "Authorization", "Bearer "+s.token, "Authorization", "Bearer "+s.token),
		http.StatusUnauthorized, "unauthorized: more than one Authorization header")

	// The right token (the scheme is case-insensitive).
	if r := s.post(t, initBody, "Authorization", "bearer "+s.token); r.status != http.StatusOK || r.header.Get("Mcp-Session-Id") == "" {
		t.Fatalf("right token: HTTP %d %q", r.status, r.body)
	}
	sid := s.session(t)
	// The event stream and DELETE need it too.
	oneLine(t, "GET without token", s.stream(t, sid), http.StatusUnauthorized, "unauthorized: send Authorization")
	oneLine(t, "GET wrong token", s.stream(t, sid, "Authorization", "Bearer "+string(sameLength)), http.StatusUnauthorized, "unauthorized: wrong bearer token")
	oneLine(t, "DELETE without token", s.raw(t, http.MethodDelete, "", "Mcp-Session-Id", sid), http.StatusUnauthorized, "unauthorized: send Authorization")
	oneLine(t, "DELETE wrong token", s.raw(t, http.MethodDelete, "", "Mcp-Session-Id", sid, "Authorization", "Bearer "+string(sameLength)), http.StatusUnauthorized, "unauthorized: wrong bearer token")
	if r := s.stream(t, sid, "Authorization", "Bearer "+s.token); r.status != http.StatusOK || !strings.HasPrefix(r.header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("GET with the token: HTTP %d %q %q", r.status, r.header.Get("Content-Type"), r.body)
	}
	if r := s.raw(t, http.MethodDelete, "", "Mcp-Session-Id", sid, "Authorization", "Bearer "+s.token); r.status/100 != 2 {
		t.Fatalf("DELETE with the token: HTTP %d %q", r.status, r.body)
	}
	// The SDK client with the token works end to end.
	c := httpClient(t, s)
	if r := c.send(c.open(nil), "echo authorized"); !strings.Contains(r.Text, "authorized\n") {
		t.Fatalf("send: %q", r.Text)
	}
	logs := s.stderr.String()
	if strings.Contains(logs, s.token) {
		t.Fatal("the token is in the server's log")
	}
	if !strings.Contains(logs, `"token_file":"`+s.tokenFile+`","created":true`) || !strings.Contains(logs, `"reason":"unauthorized: wrong bearer token"`) {
		t.Fatalf("log: %s", tailString(logs, 3000))
	}
}

// Origin is checked on every method, before the token: the server's own
// origins pass, an allowed foreign origin gets CORS (its preflight is
// answered without the token), anything else is 403 without CORS headers.
func TestHTTPOrigin(t *testing.T) {
	s := httpServer(t, "-http-allow-origin", "https://app.example/", "-http-allow-origin", "http://LOCALHOST:3000")
	port := s.port(t)
	auth := []string{"Authorization", "Bearer " + s.token}
	other, _ := strconv.Atoi(port)
	foreign := []string{
		"http://evil.example",
		"http://127.0.0.1:" + strconv.Itoa(other%65535+1), // another local port
		"https://127.0.0.1:" + port,                       // another scheme
		"http://localhost",                                // port 80
		"http://app.example",                              // the allowed one is https
		"http://localhost:3001",                           // not the allowed port
	}
	for _, o := range foreign {
		want := "forbidden: origin " + strings.ToLower(o) + " is not allowed"
		r := s.post(t, initBody, append(auth, "Origin", o)...)
		oneLine(t, "POST from "+o, r, http.StatusForbidden, want)
		noCORS(t, "POST from "+o, r)
		// Refused before the token is looked at.
		oneLine(t, "POST from "+o+" without token", s.post(t, initBody, "Origin", o), http.StatusForbidden, want)
	}
	for _, o := range []string{"null", "", "file://", "evil.example", "http://a.example/path", "http://localhost:3000.evil.example"} {
		oneLine(t, "POST from "+o, s.post(t, initBody, append(auth, "Origin", o)...), http.StatusForbidden, "forbidden: malformed Origin")
	}
	oneLine(t, "two Origins", s.post(t, initBody, append(auth, "Origin", "http://127.0.0.1:"+port, "Origin", "http://127.0.0.1:"+port)...),
		http.StatusForbidden, "forbidden: more than one Origin header")

	// The server's own origins: the loopback names at its port.
	for _, o := range []string{"http://127.0.0.1:" + port, "http://localhost:" + port, "http://[::1]:" + port} {
		r := s.post(t, initBody, append(auth, "Origin", o)...)
		if r.status != http.StatusOK || r.header.Get("Mcp-Session-Id") == "" {
			t.Fatalf("POST from own origin %s: HTTP %d %q", o, r.status, r.body)
		}
		noCORS(t, "own origin "+o, r)
	}

	// The event stream and DELETE.
	own := "http://localhost:" + port
	sid := s.session(t, "Origin", own)
	for _, o := range foreign[:3] {
		r := s.stream(t, sid, append(auth, "Origin", o)...)
		oneLine(t, "GET from "+o, r, http.StatusForbidden, "forbidden: origin")
		noCORS(t, "GET from "+o, r)
		oneLine(t, "DELETE from "+o, s.raw(t, http.MethodDelete, "", append(auth, "Mcp-Session-Id", sid, "Origin", o)...), http.StatusForbidden, "forbidden: origin")
	}
	if r := s.stream(t, sid, append(auth, "Origin", own)...); r.status != http.StatusOK {
		t.Fatalf("GET from own origin: HTTP %d %q", r.status, r.body)
	}
	if r := s.raw(t, http.MethodDelete, "", append(auth, "Mcp-Session-Id", sid, "Origin", own)...); r.status/100 != 2 {
		t.Fatalf("DELETE from own origin: HTTP %d %q", r.status, r.body)
	}

	// An allowed foreign origin: the preflight, without the token.
	for _, o := range []string{"https://app.example", "http://localhost:3000"} {
		pre := s.raw(t, http.MethodOptions, "", "Origin", o, "Access-Control-Request-Method", "POST",
			"Access-Control-Request-Headers", "authorization,content-type,mcp-protocol-version")
		want := map[string]string{
			"Access-Control-Allow-Origin":   o,
			"Access-Control-Allow-Methods":  "GET, POST, DELETE, OPTIONS",
			"Access-Control-Allow-Headers":  "Authorization, Content-Type, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID",
			"Access-Control-Expose-Headers": "Mcp-Session-Id",
			"Vary":                          "Origin",
		}
		if pre.status != http.StatusNoContent {
			t.Fatalf("preflight from %s: HTTP %d %q", o, pre.status, pre.body)
		}
		for k, v := range want {
			if got := pre.header.Get(k); got != v {
				t.Fatalf("preflight from %s: %s %q, want %q", o, k, got, v)
			}
		}
	}
	// Its requests: with the token, served with CORS headers; without, a
	// 401 the page can read.
	o := "https://app.example"
	r := s.post(t, initBody, append(auth, "Origin", o)...)
	if r.status != http.StatusOK || r.header.Get("Mcp-Session-Id") == "" || r.header.Get("Access-Control-Allow-Origin") != o ||
		r.header.Get("Access-Control-Expose-Headers") != "Mcp-Session-Id" || r.header.Get("Vary") != "Origin" || r.header.Get("Access-Control-Allow-Methods") != "" {
		t.Fatalf("POST from allowed origin: HTTP %d %v %q", r.status, r.header, r.body)
	}
	r = s.post(t, initBody, "Origin", o)
	oneLine(t, "allowed origin without token", r, http.StatusUnauthorized, "unauthorized:")
	if r.header.Get("Access-Control-Allow-Origin") != o {
		t.Fatalf("a 401 to an allowed origin without CORS: %v", r.header)
	}
	sid = s.session(t, "Origin", o)
	if r := s.stream(t, sid, append(auth, "Origin", o)...); r.status != http.StatusOK || r.header.Get("Access-Control-Allow-Origin") != o {
		t.Fatalf("GET from allowed origin: HTTP %d %v", r.status, r.header)
	}
	// A preflight from a foreign origin is refused; an OPTIONS that is
	// not a preflight needs the token like any request.
	r = s.raw(t, http.MethodOptions, "", "Origin", "http://evil.example", "Access-Control-Request-Method", "POST")
	oneLine(t, "foreign preflight", r, http.StatusForbidden, "forbidden: origin http://evil.example")
	noCORS(t, "foreign preflight", r)
	oneLine(t, "OPTIONS without a method to preflight", s.raw(t, http.MethodOptions, "", "Origin", o), http.StatusUnauthorized, "unauthorized:")
	// No Origin at all (not a browser): the token decides.
	if r := s.post(t, initBody, auth...); r.status != http.StatusOK {
		t.Fatalf("no Origin: HTTP %d %q", r.status, r.body)
	}
}

// Off loopback the server's own origin is the one the request's Host
// names, over https; the SDK does not check Host there, and TLS
// authenticated the name to the browser.
func TestGuardOwnOriginOffLoopback(t *testing.T) {
	const token = "0123456789abcdef0123456789abcdef"
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	g := newGuard(next, token, &net.TCPAddr{IP: net.ParseIP("192.0.2.10"), Port: 8443}, true, nil, zerolog.Nop())
	for _, tc := range []struct {
		host, origin string
		want         int
	}{
		{"mcp.example:8443", "https://mcp.example:8443", http.StatusOK},
		{"MCP.example:8443", "https://mcp.example:8443", http.StatusOK},
		{"mcp.example", "https://mcp.example", http.StatusOK},
		{"mcp.example:443", "https://mcp.example", http.StatusOK},
		{"[2001:db8::1]:8443", "https://[2001:db8::1]:8443", http.StatusOK},
		{"mcp.example:8443", "http://mcp.example:8443", http.StatusForbidden},
		{"mcp.example:8443", "https://mcp.example", http.StatusForbidden},
		{"mcp.example:8443", "https://evil.example:8443", http.StatusForbidden},
		{"mcp.example:8443", "https://127.0.0.1:8443", http.StatusForbidden},
	} {
		req := httptest.NewRequest(http.MethodPost, "https://"+tc.host+"/mcp", nil)
		req.Host = tc.host
		req.Header.Set("Origin", tc.origin)
		req.Header.Set("Authorization", "Bearer "+token)
		w := httptest.NewRecorder()
		g.ServeHTTP(w, req)
		if w.Code != tc.want {
			t.Errorf("Host %s, Origin %s: HTTP %d, want %d (%s)", tc.host, tc.origin, w.Code, tc.want, w.Body)
		}
	}
}

// The token file: created 0600 with a fresh token when missing, reused
// when present, refused (never repaired) when others can read or write it
// or its token is unusable.
func TestLoadToken(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "token")
	tok, created, err := loadToken(p, false)
	if err != nil || !created || len(tok) != 43 || checkToken(tok) != nil {
		t.Fatalf("create: %q %v %v", tok, created, err)
	}
	if st, err := os.Stat(p); err != nil || st.Mode() != 0o600 {
		t.Fatalf("created with mode %v (%v)", st.Mode(), err)
	}
	if b, _ := os.ReadFile(p); string(b) != tok+"\n" {
		t.Fatalf("file holds %q", b)
	}
	again, created, err := loadToken(p, false)
	if err != nil || created || again != tok {
		t.Fatalf("reuse: %q %v %v", again, created, err)
	}
	if other, _, err := loadToken(filepath.Join(dir, "other"), false); err != nil || other == tok {
		t.Fatalf("a second file: %v, same token %v", err, other == tok)
	}

	// Others may read or write it: refused, and left as it is.
	for _, mode := range []os.FileMode{0o640, 0o604, 0o620, 0o602, 0o644, 0o666} {
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		_, _, err := loadToken(p, false)
		if err == nil || !strings.Contains(err.Error(), "has mode 0"+strconv.FormatUint(uint64(mode), 8)) || !strings.Contains(err.Error(), "chmod 600 "+p) {
			t.Fatalf("mode %04o: %v", mode, err)
		}
		if st, _ := os.Stat(p); st.Mode().Perm() != mode {
			t.Fatalf("mode %04o changed to %v", mode, st.Mode())
		}
	}
	if err := os.Chmod(p, 0o400); err != nil {
		t.Fatal(err)
	}
	if again, _, err := loadToken(p, false); err != nil || again != tok {
		t.Fatalf("mode 0400: %v", err)
	}

	// What the file holds.
	write := func(s string) string {
		f := filepath.Join(t.TempDir(), "token")
		if err := os.WriteFile(f, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	hex64 := strings.Repeat("0123456789abcdef", 4)
	for _, tc := range []struct{ content, want string }{
		{"", "the token is empty"},
		{" \n\t\n", "the token is empty"},
		{"short\n", "the token has 5 characters; at least 32 are required"},
		{hex64[:31], "the token has 31 characters"},
		{hex64[:20] + " " + hex64[:20], "a character a bearer token cannot carry at byte 20"},
		{hex64 + "\x00", "a character a bearer token cannot carry"},
		{hex64[:20] + "=" + hex64[:20], "a character a bearer token cannot carry at byte 20"},
		{strings.Repeat("=", 40), "the token is only padding"},
		{strings.Repeat("a", maxTokenLen+1), "longer than 4096 bytes"},
	} {
		f := write(tc.content)
		_, _, err := loadToken(f, false)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "delete the file") {
			t.Errorf("content %.50q: %v, want %q", tc.content, err, tc.want)
		}
		if b, _ := os.ReadFile(f); string(b) != tc.content {
			t.Errorf("content %.50q: the file was changed", tc.content)
		}
	}
	for _, tok := range []string{hex64, hex64[:32], "abc-DEF_ghi.jkl~mno+pqr/stu0vwxyz0==", hex64 + "\r\n"} {
		got, created, err := loadToken(write(tok), false)
		if err != nil || created || got != strings.TrimSpace(tok) {
			t.Errorf("token %q: %q %v", tok, got, err)
		}
	}

	// Not a regular file (a FIFO is not even opened: that would block).
	if _, _, err := loadToken(t.TempDir(), false); err == nil || !strings.Contains(err.Error(), "is not a regular file") {
		t.Fatalf("a directory: %v", err)
	}
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := loadToken(fifo, false); err == nil || !strings.Contains(err.Error(), "is not a regular file") {
		t.Fatalf("a FIFO: %v", err)
	}
	// A missing directory is created (0700) for the default location
	// only.
	deep := filepath.Join(t.TempDir(), "a", "b", "token")
	if _, _, err := loadToken(deep, false); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing directory without mkdir: %v", err)
	}
	if _, created, err := loadToken(deep, true); err != nil || !created {
		t.Fatalf("missing directory with mkdir: %v", err)
	}
	if st, err := os.Stat(filepath.Dir(deep)); err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("directory mode %v (%v)", st.Mode(), err)
	}
}

// Without -http-token-file the server uses ptymcp-http-token in the user
// config directory: created there on the first start, reused by the next,
// and refused once others can read it.
func TestHTTPTokenFileDefault(t *testing.T) {
	home := filepath.Join(t.TempDir(), "config") // does not exist yet
	s1 := startHTTP(t, home, "-http", "127.0.0.1:0")
	want := filepath.Join(home, TokenFileName)
	if s1.tokenFile != want {
		t.Fatalf("token file %s, want %s", s1.tokenFile, want)
	}
	if st, err := os.Stat(want); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("token file mode %v (%v)", st.Mode(), err)
	}
	if st, err := os.Stat(home); err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("config directory mode %v (%v)", st.Mode(), err)
	}
	s2 := startHTTP(t, home, "-http", "127.0.0.1:0")
	if s2.token != s1.token || !strings.Contains(s2.stderr.String(), `"created":false`) {
		t.Fatalf("the second server did not reuse the token file")
	}
	c := httpClient(t, s2)
	c.ok(tools.TerminalList, nil)
	if err := os.Chmod(want, 0o640); err != nil {
		t.Fatal(err)
	}
	out := runFails(t, home, "-http", "127.0.0.1:0")
	if !strings.Contains(out, "ptymcp: HTTP token file "+want+" has mode 0640: others can read or change it") {
		t.Fatalf("group-readable token file: %s", out)
	}
}

// Off loopback, -http refuses to start without TLS, with a clear error
// before listening (and before the token file is made).
func TestHTTPNeedsTLSOffLoopback(t *testing.T) {
	home := t.TempDir()
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0", "192.0.2.1:8765", "example.com:8765"} {
		out := runFails(t, home, "-http", addr)
		if !strings.Contains(out, "ptymcp: -http "+addr+" is not a loopback address: serving off loopback needs TLS (-http-tls-cert and -http-tls-key)") {
			t.Fatalf("-http %s: %s", addr, out)
		}
	}
	if _, err := os.Stat(filepath.Join(home, TokenFileName)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused start made a token file: %v", err)
	}
	if out := runFails(t, home, "-http", "127.0.0.1:0", "-http-tls-cert", "c.pem"); !strings.Contains(out, "-http-tls-cert and -http-tls-key go together") {
		t.Fatalf("cert without key: %s", out)
	}
	missing := filepath.Join(t.TempDir(), "missing.pem")
	if out := runFails(t, home, "-http", "0.0.0.0:0", "-http-tls-cert", missing, "-http-tls-key", missing); !strings.Contains(out, "ptymcp: -http-tls-cert/-http-tls-key: open "+missing) {
		t.Fatalf("unreadable certificate: %s", out)
	}
	if out := runFails(t, home, "-http", "127.0.0.1:0", "-http-allow-origin", "*"); !strings.Contains(out, "want an origin such as https://app.example") {
		t.Fatalf("-http-allow-origin *: %s", out)
	}
}

// With -http-tls-cert/-key the server speaks HTTPS: the SDK client with
// the token works, the own origin is https, and plain HTTP is refused.
func TestHTTPTLS(t *testing.T) {
	cert, key, pool := selfSigned(t)
	s := httpServer(t, "-http-tls-cert", cert, "-http-tls-key", key)
	if !strings.HasPrefix(s.url, "https://127.0.0.1:") {
		t.Fatalf("endpoint %s", s.url)
	}
	s.tr.TLSClientConfig = &tls.Config{RootCAs: pool}
	c := httpClient(t, s)
	if r := c.send(c.open(nil), "echo over-tls"); !strings.Contains(r.Text, "over-tls\n") {
		t.Fatalf("send over TLS: %q", r.Text)
	}
	port := s.port(t)
	auth := []string{"Authorization", "Bearer " + s.token}
	if r := s.post(t, initBody, append(auth, "Origin", "https://localhost:"+port)...); r.status != http.StatusOK {
		t.Fatalf("own https origin: HTTP %d %q", r.status, r.body)
	}
	oneLine(t, "http origin", s.post(t, initBody, append(auth, "Origin", "http://localhost:"+port)...), http.StatusForbidden, "forbidden: origin http://localhost:"+port)
	oneLine(t, "no token over TLS", s.post(t, initBody), http.StatusUnauthorized, "unauthorized:")
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Post("http://"+s.addr+"/mcp", "application/json", strings.NewReader(initBody))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("plain HTTP to the TLS port: HTTP %d", resp.StatusCode)
	}
}

// selfSigned writes a certificate for 127.0.0.1, ::1 and localhost and its
// key, and returns their files and a pool trusting it.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	return testkit.SelfSignedCert(t, t.TempDir())
}

func TestCanonOrigin(t *testing.T) {
	for in, want := range map[string]string{
		"http://localhost:3000":     "http://localhost:3000",
		"HTTPS://App.Example":       "https://app.example",
		"https://app.example:443":   "https://app.example",
		"http://app.example:80":     "http://app.example",
		"http://app.example:443":    "http://app.example:443",
		"http://[::1]:8765":         "http://[::1]:8765",
		"https://[2001:DB8::1]:443": "https://[2001:db8::1]",
	} {
		if got, err := canonOrigin(in); err != nil || got != want {
			t.Errorf("%s: %q %v, want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "null", "*", "ftp://a.example", "http://", "http://a.example/", "http://a.example?x", "http://a.example#f",
		"http://u@a.example", "http://a.example:0", "http://a.example:65536", "http://a.example:x", "a.example:80"} {
		if got, err := canonOrigin(in); err == nil {
			t.Errorf("%q accepted as %q", in, got)
		}
	}
	var l OriginList
	for _, s := range []string{"https://app.example/", "http://LOCALHOST:3000"} {
		if err := l.Set(s); err != nil {
			t.Fatal(err)
		}
	}
	if l.String() != "https://app.example,http://localhost:3000" {
		t.Fatalf("list %q", l.String())
	}
}
