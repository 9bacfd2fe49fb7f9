package textcut

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestHead(t *testing.T) {
	s := "aé€😀" // 1, 2, 3 and 4 bytes
	for _, tc := range []struct {
		limit int
		want  string
	}{
		{-1, ""}, {0, ""}, {1, "a"}, {2, "a"}, {3, "aé"}, {4, "aé"}, {5, "aé"},
		{6, "aé€"}, {9, "aé€"}, {10, s}, {100, s},
	} {
		if got := s[:Head(s, tc.limit)]; got != tc.want {
			t.Errorf("Head(%q, %d): %q, want %q", s, tc.limit, got, tc.want)
		}
		if got := string([]byte(s)[:Head([]byte(s), tc.limit)]); got != tc.want {
			t.Errorf("Head([]byte(%q), %d): %q, want %q", s, tc.limit, got, tc.want)
		}
	}
}

func TestTail(t *testing.T) {
	s := "😀€éa" // 4, 3, 2 and 1 bytes
	for _, tc := range []struct {
		limit int
		want  string
	}{
		{-1, ""}, {0, ""}, {1, "a"}, {2, "a"}, {3, "éa"}, {4, "éa"}, {5, "éa"},
		{6, "€éa"}, {9, "€éa"}, {10, s}, {100, s},
	} {
		if got := s[Tail(s, tc.limit):]; got != tc.want {
			t.Errorf("Tail(%q, %d): %q, want %q", s, tc.limit, got, tc.want)
		}
		if got := string([]byte(s)[Tail([]byte(s), tc.limit):]); got != tc.want {
			t.Errorf("Tail([]byte(%q), %d): %q, want %q", s, tc.limit, got, tc.want)
		}
	}
}

// TestInvalid: text that is not UTF-8 is cut within a bounded distance of
// the limit, never beyond it.
func TestInvalid(t *testing.T) {
	s := strings.Repeat("\x80", 64)
	for limit := 0; limit <= len(s); limit++ {
		if n := Head(s, limit); n > limit || n < limit-utf8.UTFMax {
			t.Errorf("Head(continuations, %d) = %d", limit, n)
		}
		if i := Tail(s, limit); len(s)-i > limit || len(s)-i < limit-utf8.UTFMax {
			t.Errorf("Tail(continuations, %d) = %d", limit, i)
		}
	}
}

func FuzzCut(f *testing.F) {
	f.Add("aé€😀", 3)
	f.Fuzz(func(t *testing.T, s string, limit int) {
		if !utf8.ValidString(s) {
			return
		}
		h, tl := s[:Head(s, limit)], s[Tail(s, limit):]
		if !utf8.ValidString(h) || !utf8.ValidString(tl) {
			t.Fatalf("cut %q at %d splits a character: %q, %q", s, limit, h, tl)
		}
		if len(h) > max(limit, 0) || len(tl) > max(limit, 0) {
			t.Fatalf("cut %q at %d: %q, %q exceed the limit", s, limit, h, tl)
		}
		if limit >= len(s) && (h != s || tl != s) {
			t.Fatalf("cut %q at %d: %q, %q; want it whole", s, limit, h, tl)
		}
		if limit > 0 && limit < len(s) && (len(h) <= limit-utf8.UTFMax || len(tl) <= limit-utf8.UTFMax) {
			t.Fatalf("cut %q at %d: %q, %q; too short", s, limit, h, tl)
		}
	})
}
