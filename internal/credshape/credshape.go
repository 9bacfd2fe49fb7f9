// Package credshape recognises credentials by the shape of their value
// (a PEM private key, a GitHub or Slack token, an AWS access key id, an
// API key with a known prefix) and takes them out of text. The environment
// a shell starts with is scrubbed with Value; what a session's record
// keeps of input and output, with Redact.
package credshape

import (
	"strconv"
	"strings"
)

// tokenPrefixes start the tokens of well-known services.
var tokenPrefixes = []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "sk-", "sk_live_", "rk_live_"}

// Value reports whether v, a whole value, has the shape of a well-known
// credential.
func Value(v string) bool {
	if strings.Contains(v, pemBegin) && strings.Contains(v, "PRIVATE KEY") {
		return true
	}
	return token(v)
}

// token reports whether one word is a credential.
func token(v string) bool {
	for _, p := range tokenPrefixes {
		if strings.HasPrefix(v, p) && len(v) > len(p)+8 {
			return true
		}
	}
	if len(v) >= 20 && (strings.HasPrefix(v, "AKIA") || strings.HasPrefix(v, "ASIA")) && upperAlnum(v[4:20]) {
		return true
	}
	// Slack tokens: xoxa-, xoxb-, xoxp-, xoxr-, xoxs-, ...
	return len(v) > 5 && strings.HasPrefix(v, "xox") && v[4] == '-'
}

func upperAlnum(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

const (
	pemBegin = "-----BEGIN"
	pemEnd   = "-----END"
)

// Redact replaces every credential in text with "[redacted N bytes]": the
// body of a PEM private key block, and every word (a run of bytes between
// spaces, quotes, '=', ':' and line ends) shaped like a token. A credential
// split across two calls is seen by neither: the caller decides what one
// call covers.
func Redact(text string) string {
	if !mayHold(text) {
		return text
	}
	text = redactPEM(text)
	// Most text holds no token: find the first before copying anything.
	start, end := nextToken(text, 0)
	if start < 0 {
		return text
	}
	var b strings.Builder
	b.Grow(len(text))
	done := 0
	for start >= 0 {
		b.WriteString(text[done:start])
		b.WriteString(redacted(end - start))
		done = end
		start, end = nextToken(text, end)
	}
	b.WriteString(text[done:])
	return b.String()
}

// mayHold reports whether text has a byte every shape holds: a '-' (PEM,
// sk-, xox?-), a '_' (gh?_, github_pat_, sk_live_, rk_live_) or an 'A'
// (AKIA, ASIA). Three vectorized searches: most output holds none, and
// this runs over every byte a session prints.
func mayHold(text string) bool {
	return strings.IndexByte(text, '-') >= 0 || strings.IndexByte(text, '_') >= 0 || strings.IndexByte(text, 'A') >= 0
}

// nextToken returns the bounds of the first word at or after from that is
// a token, or -1. A word starts after a separator; only words whose first
// byte can start a token (tokenStart) are looked at whole.
func nextToken(text string, from int) (start, end int) {
	for i := from; i < len(text); {
		if separator(text[i]) {
			i++
			continue
		}
		j := i + 1
		for j < len(text) && !separator(text[j]) {
			j++
		}
		if tokenStart(text[i]) && token(text[i:j]) {
			return i, j
		}
		i = j
	}
	return -1, -1
}

// tokenStart reports the first bytes of the shapes token knows: gh*_,
// github_pat_, sk-, sk_live_, rk_live_, AKIA, ASIA and xox*-.
func tokenStart(c byte) bool { return c == 'g' || c == 's' || c == 'r' || c == 'A' || c == 'x' }

func separator(c byte) bool {
	switch c {
	case ' ', '\t', '\r', '\n', '"', '\'', '=', ':', ',', ';', '(', ')', '[', ']', '{', '}', '<', '>', '`':
		return true
	}
	return false
}

// redactPEM replaces the body of every private key block, from its BEGIN
// line to its END line (or the text's end when the block is cut).
func redactPEM(text string) string {
	for from := 0; ; {
		i := strings.Index(text[from:], pemBegin)
		if i < 0 {
			return text
		}
		i += from
		line := strings.IndexByte(text[i:], '\n')
		if line < 0 || !strings.Contains(text[i:i+line], "PRIVATE KEY") {
			from = i + len(pemBegin)
			continue
		}
		bodyStart := i + line + 1
		if strings.HasPrefix(text[bodyStart:], "[redacted ") {
			from = bodyStart // redacted already
			continue
		}
		end := strings.Index(text[bodyStart:], pemEnd)
		bodyEnd := len(text)
		if end >= 0 {
			bodyEnd = bodyStart + end
		}
		r := redacted(bodyEnd-bodyStart) + "\n"
		text = text[:bodyStart] + r + text[bodyEnd:]
		from = bodyStart + len(r)
	}
}

func redacted(n int) string { return "[redacted " + strconv.Itoa(n) + " bytes]" }
