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
