//go:build linux

package local

import (
	"testing"
)

// BenchmarkLeftovers is the receipt's price on every prompt when a command
// left nothing running: one pread of the shell's children file. Compare it
// with the ~70 us of the raw echo floor (bench/): the echo bar allows 2 %.
func BenchmarkLeftovers(b *testing.B) {
	rec := &recorder{}
	bs := spawn(b, rec)
	waitPrompt(b, rec, 0)
	l := bs.(*session)
	for b.Loop() {
		if procs, _ := l.Leftovers(); len(procs) != 0 {
			b.Fatalf("an idle shell has children: %+v", procs)
		}
	}
}
