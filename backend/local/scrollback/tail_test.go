package scrollback

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTailKeepsMostRecent(t *testing.T) {
	tl := NewTail(10)
	tl.Write([]byte("hello "))
	if tl.Len() != 6 {
		t.Fatalf("Len = %d", tl.Len())
	}
	if text, dropped := tl.Take(); text != "hello " || dropped {
		t.Fatalf("Take = %q, %v", text, dropped)
	}
	if text, dropped := tl.Take(); text != "" || dropped {
		t.Fatalf("Take after Take = %q, %v", text, dropped)
	}
	tl.Write([]byte("0123456789"))
	if text, dropped := tl.Take(); text != "0123456789" || dropped {
		t.Fatalf("exactly at the bound: %q, %v", text, dropped)
	}
	tl.Write([]byte("01234"))
	tl.Write([]byte("56789ab"))
	if text, dropped := tl.Take(); text != "23456789ab" || !dropped {
		t.Fatalf("over the bound: %q, %v", text, dropped)
	}
	// The dropped flag belongs to the period since the last Take.
	tl.Write([]byte("x"))
	if text, dropped := tl.Take(); text != "x" || dropped {
		t.Fatalf("after Take: %q, %v", text, dropped)
	}
}

func TestTailHugeWrite(t *testing.T) {
	tl := NewTail(1000)
	huge := strings.Repeat("abcdefghij", 100_000)
	tl.Write([]byte("old"))
	tl.Write([]byte(huge))
	if c := cap(tl.w.buf); c > 2*1000 {
		t.Fatalf("a huge write grew the array to %d bytes", c)
	}
	if text, dropped := tl.Take(); text != huge[len(huge)-1000:] || !dropped {
		t.Fatalf("Take = %q..., %v", text[:10], dropped)
	}
}

func TestTailUTF8(t *testing.T) {
	for limit := 1; limit <= 16; limit++ {
		tl := NewTail(limit)
		in := "a€🎉b€🎉"
		for _, r := range in {
			tl.Write([]byte(string(r)))
		}
		text, dropped := tl.Take()
		if !utf8.ValidString(text) || len(text) > limit {
			t.Fatalf("limit %d: %q", limit, text)
		}
		if want := utf8Tail(in, limit); text != want || dropped != (len(in) > limit) {
			t.Fatalf("limit %d: got %q, %v; want %q", limit, text, dropped, want)
		}
	}
}

func TestTailRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	pieces := []string{"a", "bc", "é", "€", "🎉", "\n", strings.Repeat("z", 50)}
	for it := 0; it < 2000; it++ {
		limit := 1 + rng.IntN(60)
		tl := NewTail(limit)
		var all string
		for w := rng.IntN(20); w >= 0; w-- {
			var sb strings.Builder
			for k := rng.IntN(5); k >= 0; k-- {
				sb.WriteString(pieces[rng.IntN(len(pieces))])
			}
			all += sb.String()
			tl.Write([]byte(sb.String()))
			if tl.Len() != len(utf8Tail(all, limit)) {
				t.Fatalf("limit %d after %q: Len = %d", limit, all, tl.Len())
			}
		}
		text, dropped := tl.Take()
		if want := utf8Tail(all, limit); text != want || dropped != (len(all) > limit) {
			t.Fatalf("limit %d, input %q: got %q, %v; want %q", limit, all, text, dropped, want)
		}
	}
}

func TestTailLazyAndReleases(t *testing.T) {
	var tl *Tail
	if allocs := testing.AllocsPerRun(100, func() { tl = NewTail(256 << 10) }); allocs != 1 {
		t.Errorf("NewTail made %v allocations, want just the Tail", allocs)
	}
	if cap(tl.w.buf) != 0 {
		t.Fatalf("a new Tail holds %d bytes", cap(tl.w.buf))
	}
	tl.Write([]byte("small"))
	tl.Take()
	if c := cap(tl.w.buf); c == 0 || c > keepOnTake {
		t.Fatalf("a small array should be kept for reuse, cap %d", c)
	}
	tl.Write([]byte(strings.Repeat("x", 200<<10)))
	if _, dropped := tl.Take(); dropped {
		t.Fatal("nothing was dropped")
	}
	if c := cap(tl.w.buf); c != 0 {
		t.Fatalf("Take kept a %d-byte array", c)
	}
	tl.Write([]byte(strings.Repeat("x", 300<<10)))
	tl.Reset()
	if tl.Len() != 0 || cap(tl.w.buf) != 0 {
		t.Fatalf("Reset kept %d bytes in a %d-byte array", tl.Len(), cap(tl.w.buf))
	}
	if text, dropped := tl.Take(); text != "" || dropped {
		t.Fatalf("Reset must clear the dropped flag: %q, %v", text, dropped)
	}
}

func TestTailSteadyWritesDoNotAllocate(t *testing.T) {
	tl := NewTail(64 << 10)
	chunk := floodChunk(4096)
	for i := 0; i < 64; i++ {
		tl.Write(chunk)
	}
	if allocs := testing.AllocsPerRun(100, func() { tl.Write(chunk) }); allocs != 0 {
		t.Fatalf("Write allocated %v times", allocs)
	}
}
