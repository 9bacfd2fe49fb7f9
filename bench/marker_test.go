package bench

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/creack/pty"
)

// BenchmarkSendEchoMarkerCost isolates what the prompt marker costs bash
// itself: the raw loop, once as the baseline and once with a PROMPT_COMMAND
// shaped like ptyactor's (printf of the OSC marker, PS1 re-asserted).
func BenchmarkSendEchoMarkerCost(b *testing.B) {
	pcs := map[string]string{
		"none":   "",
		"marker": `__pa_s=$?; printf '\033]133;D;%s;0123456789abcdef01234567\007' "$__pa_s"; PS1='` + rawPS1 + `'; export -n PS1 PROMPT_COMMAND; unset __pa_s`,
		"lean":   `printf '\033]133;D;%s;0123456789abcdef01234567\007' "$?"`,
	}
	for _, name := range []string{"none", "marker", "lean"} {
		b.Run(name, func(b *testing.B) {
			cmd := exec.Command("bash", "--norc", "--noprofile", "-i")
			cmd.Env = append(os.Environ(), "PS1="+rawPS1, "TERM=dumb", "HISTFILE=", "PROMPT_COMMAND="+pcs[name])
			f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 160})
			if err != nil {
				b.Fatal(err)
			}
			r := &rawShell{cmd: cmd, f: f, buf: make([]byte, 64<<10)}
			defer r.close()
			if _, err := r.until(rawPS1); err != nil {
				b.Fatal(err)
			}
			var samples []time.Duration
			for b.Loop() {
				t0 := time.Now()
				_ = r.send("echo hi")
				if _, err := r.until(rawPS1); err != nil {
					b.Fatal(err)
				}
				samples = append(samples, time.Since(t0))
			}
			reportMedian(b, samples)
		})
	}
}

// BenchmarkMarkerForms compares, interleaved (one round trip on each shell
// per iteration, so load hits all alike), what ways of printing the marker
// once per prompt cost bash: none (the raw floor); printf with PS1
// re-asserted (ptyactor's form until 2026-12); printf alone; and a shell
// function holding the same printf, so PROMPT_COMMAND is a single word to
// parse. (The marker inside PS1 itself is cheaper still, but readline
// reprints PS1 whenever it redraws the line, so a marker there repeats
// with a stale status on every redisplay: not a marker.)
func BenchmarkMarkerForms(b *testing.B) {
	const nonce = "0123456789abcdef"
	const printf = `printf "\033]133;D;%s;` + nonce + `\007" "$?"`
	forms := []struct{ name, pc, fn string }{
		{"none", "", ""},
		{"printf-ps1", printf + `; PS1="` + rawPS1 + `"`, ""},
		{"printf", printf, ""},
		{"function", "__pa", printf},
	}
	shells := make([]*rawShell, len(forms))
	for i, f := range forms {
		cmd := exec.Command("bash", "--norc", "--noprofile", "-i")
		cmd.Env = append(os.Environ(), "PS1="+rawPS1, "TERM=dumb", "HISTFILE=", "PROMPT_COMMAND="+f.pc)
		if f.fn != "" {
			cmd.Env = append(cmd.Env, "BASH_FUNC___pa%%=() { "+f.fn+"; }")
		}
		pt, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 160})
		if err != nil {
			b.Fatal(err)
		}
		shells[i] = &rawShell{cmd: cmd, f: pt, buf: make([]byte, 64<<10)}
		defer shells[i].close()
		if _, err := shells[i].until(rawPS1); err != nil {
			b.Fatal(err)
		}
	}
	samples := make([][]time.Duration, len(forms))
	for b.Loop() {
		for i, r := range shells {
			samples[i] = append(samples[i], r.roundTrip(b, "echo hi", rawPS1))
		}
	}
	base := median(samples[0])
	for i, f := range forms {
		m := median(samples[i])
		b.ReportMetric(float64(m.Nanoseconds())/1000, f.name+"-us")
		if i > 0 {
			b.ReportMetric(float64(m)/float64(base), f.name+"-ratio")
		}
	}
}
