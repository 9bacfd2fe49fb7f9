package mcpserver

// Guarding -http: whoever reaches the port gets a shell as the server's
// user, so every request must prove it holds the token (a bearer token
// read from a 0600 file), and a browser page from another origin must not
// reach the handler at all (the MCP streamable-HTTP transport says servers
// MUST validate Origin). Off loopback, the token would cross the network,
// so the server refuses to start without TLS.

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"
)

// TokenFileName is the token file's name under os.UserConfigDir() when
// -http-token-file is not given.
const TokenFileName = "ptymcp-http-token"

const (
	// minTokenLen: a token of fewer characters is refused. The generated
	// one is 32 random bytes, 43 characters of base64url.
	minTokenLen = 32
	// maxTokenLen bounds what is read from the token file.
	maxTokenLen = 4096
)

// defaultTokenPath is where the token lives without -http-token-file.
func defaultTokenPath() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no user config directory for the HTTP token file (pass -http-token-file): %w", err)
	}
	return filepath.Join(dir, TokenFileName), nil
}

// loadToken reads the bearer token from path, or creates the file (mode
// 0600, O_EXCL) holding a fresh random token when it does not exist.
// mkdir says whether a missing parent directory may be created (0700):
// for the default location only, so a typo in -http-token-file is an error
// rather than a new directory. A file that others may read or write, that
// is not a regular file, or whose token is empty, short or not a valid
// bearer token is refused, never repaired: the token may already have
// leaked, and the user should choose.
func loadToken(path string, mkdir bool) (token string, created bool, err error) {
	if mkdir {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return "", false, fmt.Errorf("HTTP token file: %w", err)
		}
	}
	token, err = readToken(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return token, false, err
	}
	token, err = createToken(path)
	if errors.Is(err, fs.ErrExist) { // another server created it first
		token, err = readToken(path)
		return token, false, err
	}
	return token, err == nil, err
}

func readToken(path string) (string, error) {
	// Looked at before opening: opening a FIFO would block.
	if st, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("HTTP token file: %w", err)
	} else if !st.Mode().IsRegular() {
		return "", fmt.Errorf("HTTP token file %s is not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("HTTP token file: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("HTTP token file: %w", err)
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("HTTP token file %s is not a regular file", path)
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return "", fmt.Errorf("HTTP token file %s has mode %04o: others can read or change it, so the token may have leaked; "+
			"refusing to use it (chmod 600 %s to keep this token, or delete the file to have a new one made)", path, perm, path)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxTokenLen+1))
	if err != nil {
		return "", fmt.Errorf("HTTP token file %s: %w", path, err)
	}
	token := strings.TrimSpace(string(b))
	if err := checkToken(token); err != nil {
		return "", fmt.Errorf("HTTP token file %s: %w (delete the file to have a new token made)", path, err)
	}
	return token, nil
}

// checkToken accepts what a bearer token may be (RFC 6750 b64token) and is
// long enough to be a secret.
func checkToken(token string) error {
	switch {
	case token == "":
		return errors.New("the token is empty")
	case len(token) > maxTokenLen:
		return fmt.Errorf("the token is longer than %d bytes", maxTokenLen)
	case len(token) < minTokenLen:
		return fmt.Errorf("the token has %d characters; at least %d are required", len(token), minTokenLen)
	}
	body := strings.TrimRight(token, "=")
	if body == "" {
		return errors.New("the token is only padding")
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~+/", c) >= 0) {
			return fmt.Errorf("the token has a character a bearer token cannot carry at byte %d (allowed: letters, digits, -._~+/ and trailing =)", i)
		}
	}
	return nil
}

func createToken(path string) (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("HTTP token: %w", err)
	}
	token := base64.RawURLEncoding.EncodeToString(b[:])
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return "", err
		}
		return "", fmt.Errorf("HTTP token file: %w", err)
	}
	_, err = f.WriteString(token + "\n")
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(path)
		return "", fmt.Errorf("HTTP token file %s: %w", path, err)
	}
	return token, nil
}

// loopbackHost reports whether an address's host is certainly loopback: the
// name localhost or a loopback IP. Anything else (a name, an empty host
// meaning every interface) is treated as reachable from the network.
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// canonOrigin parses an origin (scheme://host[:port], as in an Origin
// header) into a comparable form: scheme and host in lower case, the
// port dropped when it is the scheme's default.
func canonOrigin(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil {
		return "", err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", errors.New("the scheme is not http or https")
	}
	if u.Opaque != "" || u.User != nil || u.Path != "" || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || u.Hostname() == "" {
		return "", errors.New("not of the form scheme://host[:port]")
	}
	port := u.Port()
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return "", errors.New("bad port")
		}
	}
	return makeOrigin(u.Scheme, u.Hostname(), port), nil
}

// makeOrigin renders a canonical origin.
func makeOrigin(scheme, host, port string) string {
	host = strings.ToLower(host)
	if port == "" || scheme == "http" && port == "80" || scheme == "https" && port == "443" {
		if strings.Contains(host, ":") {
			host = "[" + host + "]"
		}
		return scheme + "://" + host
	}
	return scheme + "://" + net.JoinHostPort(host, port)
}

// OriginList is the repeatable -http-allow-origin flag, canonical forms.
type OriginList []string

func (l *OriginList) String() string { return strings.Join(*l, ",") }

// Set adds an origin, in canonical form.
func (l *OriginList) Set(s string) error {
	o, err := canonOrigin(strings.TrimSuffix(s, "/"))
	if err != nil {
		return fmt.Errorf("want an origin such as https://app.example or http://localhost:3000: %v", err)
	}
	*l = append(*l, o)
	return nil
}

// CORS answers for an allowed foreign origin.
const (
	corsAllowMethods  = "GET, POST, DELETE, OPTIONS"
	corsAllowHeaders  = "Authorization, Content-Type, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID"
	corsExposeHeaders = "Mcp-Session-Id"
)

// guard checks every request before the MCP handler sees it: the Origin
// first (a foreign page is refused, whatever it carries), then the CORS
// preflight of an allowed foreign origin (which never carries the token),
// then the bearer token.
type guard struct {
	tokenSum [sha256.Size]byte
	scheme   string          // http, or https with TLS
	own      map[string]bool // the server's own origins; nil: the request's Host (off loopback)
	allowed  map[string]bool // -http-allow-origin
	next     http.Handler
	log      zerolog.Logger
}

// newGuard wraps next. listen is the bound address: on loopback the own
// origins are 127.0.0.1, localhost and [::1] (and the bound IP) at its
// port, which is what the SDK's Host check accepts there; elsewhere it is
// the origin the request's Host names, as reached over TLS.
func newGuard(next http.Handler, token string, listen net.Addr, tls bool, allowed []string, log zerolog.Logger) *guard {
	g := &guard{tokenSum: sha256.Sum256([]byte(token)), scheme: "http", allowed: map[string]bool{}, next: next, log: log}
	if tls {
		g.scheme = "https"
	}
	for _, o := range allowed {
		g.allowed[o] = true
	}
	if ta, ok := listen.(*net.TCPAddr); ok && ta.IP.IsLoopback() {
		port := strconv.Itoa(ta.Port)
		g.own = map[string]bool{}
		for _, h := range []string{"127.0.0.1", "localhost", "::1", ta.IP.String()} {
			g.own[makeOrigin(g.scheme, h, port)] = true
		}
	}
	return g
}

// ownOrigin reports whether the canonical origin o is the server's own.
func (g *guard) ownOrigin(o string, r *http.Request) bool {
	if g.own != nil {
		return g.own[o]
	}
	host, port, err := net.SplitHostPort(r.Host)
	if err != nil {
		host, port = strings.Trim(r.Host, "[]"), ""
	}
	return host != "" && o == makeOrigin(g.scheme, host, port)
}

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	r.Header.Del(principalHeader) // only the guard says who called
	if vs := r.Header.Values("Origin"); len(vs) > 0 {
		if len(vs) > 1 {
			g.refuse(w, r, http.StatusForbidden, "forbidden: more than one Origin header")
			return
		}
		o, err := canonOrigin(vs[0])
		switch {
		case err != nil:
			g.refuse(w, r, http.StatusForbidden, fmt.Sprintf("forbidden: malformed Origin %q", vs[0]))
			return
		case g.ownOrigin(o, r):
		case g.allowed[o]:
			h := w.Header()
			h.Set("Access-Control-Allow-Origin", o)
			h.Set("Access-Control-Expose-Headers", corsExposeHeaders)
			h.Add("Vary", "Origin")
			if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
				h.Set("Access-Control-Allow-Methods", corsAllowMethods)
				h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
				closeAfterRefusal(w) // it carries no token either
				w.WriteHeader(http.StatusNoContent)
				return
			}
		default:
			g.refuse(w, r, http.StatusForbidden, fmt.Sprintf("forbidden: origin %s is not allowed (the server's operator can allow it with -http-allow-origin)", o))
			return
		}
	}
	if reason, presented := g.unauthorized(r); reason != "" {
		challenge := `Bearer realm="ptymcp"`
		if presented { // RFC 6750 §3.1: an error only for a token presented
			challenge += `, error="invalid_token"`
		}
		w.Header().Set("WWW-Authenticate", challenge)
		g.refuse(w, r, http.StatusUnauthorized, reason)
		return
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	r.Header.Set(principalHeader, "token@"+host)
	showedToken(r)
	g.next.ServeHTTP(w, r)
}

// principalHeader carries who a request authenticated as (the holder of
// the token, at the connection's address) from the guard to the tool
// calls, which the SDK hands the request's header (RequestExtra): it
// names the MCP session's owner. The guard drops any the client sent.
const principalHeader = "X-Ptymcp-Principal"

// principal is who the guard authenticated for a tool call's request; ""
// over stdio.
func principal(extra *mcp.RequestExtra) string {
	if extra == nil || extra.Header == nil {
		return ""
	}
	return extra.Header.Get(principalHeader)
}

// unauthorized is why r does not carry the token, or ""; presented says
// whether it carried a bearer token at all.
func (g *guard) unauthorized(r *http.Request) (reason string, presented bool) {
	vs := r.Header.Values("Authorization")
	switch {
	case len(vs) == 0:
		return "unauthorized: send Authorization: Bearer <token>, the token from the server's token file", false
	case len(vs) > 1:
		return "unauthorized: more than one Authorization header", false
	}
	scheme, token, _ := strings.Cut(vs[0], " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "unauthorized: the Authorization header is not a Bearer token", false
	}
	// Hashes are compared, so neither the token's bytes nor its length
	// show in the time taken.
	sum := sha256.Sum256([]byte(strings.TrimSpace(token)))
	if subtle.ConstantTimeCompare(sum[:], g.tokenSum[:]) != 1 {
		return "unauthorized: wrong bearer token", true
	}
	return "", true
}

// refuse answers with status and a one-line reason, closes the
// connection after it, and logs it (without any credential).
func (g *guard) refuse(w http.ResponseWriter, r *http.Request, status int, reason string) {
	g.log.Warn().Int("status", status).Str("method", r.Method).Str("remote", r.RemoteAddr).Str("reason", reason).Msg("HTTP request refused")
	closeAfterRefusal(w)
	http.Error(w, reason, status)
}
