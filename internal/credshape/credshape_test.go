package credshape

import (
	"strings"
	"testing"
)

func TestValue(t *testing.T) {
	for v, want := range map[string]bool{
		"ghp_0123456789abcdefghij": true,
		"AKIAABCDEFGHIJKLMNOP":     true,
		"xoxb-1234":                true,
		"sk-proj-abcdefghijkl":     true,
		"-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END": true,
		"ghp_short":               false,
		"hello":                   false,
		"AKIA lowercase here....": false,
	} {
		if got := Value(v); got != want {
			t.Errorf("Value(%q) = %v, want %v", v, got, want)
		}
	}
}

func TestRedact(t *testing.T) {
	key := "ghp_0123456789abcdefghijklmnop"
	pem := "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nAAAABG5vbmU=\n-----END OPENSSH PRIVATE KEY-----\n"
	tests := []struct{ in, want string }{
		{"plain text, nothing here", "plain text, nothing here"},
		{"export GITHUB_TOKEN=" + key + "\r\n", "export GITHUB_TOKEN=[redacted 30 bytes]\r\n"},
		{`{"token":"` + key + `"}`, `{"token":"[redacted 30 bytes]"}`},
		{"id AKIAABCDEFGHIJKLMNOP end", "id [redacted 20 bytes] end"},
		{"$ cat id\r\n" + pem, "$ cat id\r\n-----BEGIN OPENSSH PRIVATE KEY-----\n[redacted 38 bytes]\n-----END OPENSSH PRIVATE KEY-----\n"},
		{"-----BEGIN CERTIFICATE-----\nMIIB\n", "-----BEGIN CERTIFICATE-----\nMIIB\n"},
	}
	for _, tt := range tests {
		got := Redact(tt.in)
		if got != tt.want {
			t.Errorf("Redact(%q)\n = %q\nwant %q", tt.in, got, tt.want)
		}
		if strings.Contains(got, key) || strings.Contains(got, "b3BlbnNzaC1rZXktdjEAAAAA") {
			t.Errorf("a secret survived: %q", got)
		}
	}
}

func FuzzRedact(f *testing.F) {
	f.Add("export T=ghp_0123456789abcdefghij x")
	f.Add("-----BEGIN RSA PRIVATE KEY-----\nabc")
	f.Fuzz(func(t *testing.T, s string) {
		r := Redact(s)
		if Redact(r) != r {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, r, Redact(r))
		}
		for _, w := range strings.FieldsFunc(r, func(c rune) bool { return c < 128 && separator(byte(c)) }) {
			if token(w) {
				t.Fatalf("token %q survived in %q", w, r)
			}
		}
	})
}
