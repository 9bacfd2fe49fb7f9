package record

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// TestAppendEventIsJSONMarshal: the hand-written encoding of text events
// is byte for byte json.Marshal's, for every kind of character.
func TestAppendEventIsJSONMarshal(t *testing.T) {
	texts := []string{
		"", "plain", "a\"b\\c", "\x00\x01\x07\x08\x0c\x1b[1m\x1f\x7f", "\r\n\t", "<a href='x'>&amp;</a>",
		"café ☕ 日本", "\u2028\u2029", "emoji 😀 end", strings.Repeat("x", 5000),
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		var b strings.Builder
		for range rng.IntN(40) {
			switch rng.IntN(4) {
			case 0:
				b.WriteByte(byte(rng.IntN(0x80)))
			case 1:
				b.WriteRune(rune(rng.IntN(0x3000)))
			case 2:
				b.WriteRune(rune(0x2020 + rng.IntN(16)))
			default:
				b.WriteRune(rune(rng.IntN(0x10ffff)))
			}
		}
		texts = append(texts, b.String())
	}
	walls := []time.Time{{}, time.Date(2026, 12, 2, 19, 14, 32, 123456789, time.UTC), time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 5*3600+1800))}
	for i, text := range texts {
		for _, kind := range []Kind{KindOutput, KindInput, KindForeign} {
			ev := Event{Seq: uint64(i) * 977, Mono: time.Duration(i) * 1234567, Wall: walls[i%len(walls)], Kind: kind, Data: text}
			if kind == KindInput {
				ev.Source = SourceHuman + "ana <\"x\">"
			}
			want, err := json.Marshal(ev)
			if err != nil {
				t.Fatal(err)
			}
			got, err := appendEvent(nil, &ev)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Fatalf("event %q:\n got %s\nwant %s", text, got, want)
			}
		}
	}
}
