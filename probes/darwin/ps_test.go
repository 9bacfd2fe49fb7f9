package darwin

import (
	"context"
	"errors"
	"os"
	"slices"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func fixture(t *testing.T) []Proc {
	t.Helper()
	out, err := os.ReadFile("testdata/ps.txt")
	if err != nil {
		t.Fatal(err)
	}
	procs, err := ParsePS(out)
	if err != nil {
		t.Fatal(err)
	}
	return procs
}

func pids(procs []Proc) []int {
	var out []int
	for _, p := range procs {
		out = append(out, p.PID)
	}
	return out
}

func TestParsePS(t *testing.T) {
	procs := fixture(t)
	if len(procs) != 9 {
		t.Fatalf("%d procs; want 9", len(procs))
	}
	want := map[int]Proc{
		0:   {PID: 0, PPID: 0, PGID: 0, TPGID: 0, State: "Ss", Start: "Mon Nov 30 00:01:02 2026", Comm: "kernel_task"},
		501: {PID: 501, PPID: 1, PGID: 501, State: "S", Start: "Mon Nov 30 00:05:00 2026", Comm: "/Applications/Visual Studio Code.app/Contents/MacOS/Electron"},
		600: {PID: 600, PPID: 501, PGID: 600, TPGID: 700, State: "Ss", Start: "Mon Nov 30 00:11:30 2026", Comm: "/bin/bash"},
		701: {PID: 701, PPID: 700, PGID: 700, TPGID: 700, State: "S+", Start: "Mon Nov 3 09:07:05 2026", Comm: "/usr/bin/less -R"},
		702: {PID: 702, PPID: 700, PGID: 700, TPGID: 700, State: "Z+", Start: "Mon Nov 30 00:11:33 2026", Comm: "(sleep)"},
		704: {PID: 704, PPID: 703, PGID: 703, TPGID: 700, State: "S", Start: "Tue Dec 1 10:00:00 2026", Comm: "/Users/me/my tool/bin/run thing"},
	}
	for _, p := range procs {
		if w, ok := want[p.PID]; ok && p != w {
			t.Errorf("pid %d = %+v; want %+v", p.PID, p, w)
		}
	}
	if procs[6].Alive() || !procs[5].Alive() {
		t.Error("Alive: a zombie is not alive, a sleeper is")
	}
}

func TestParsePSMalformed(t *testing.T) {
	for _, line := range []string{
		"  600   501   600   700 Ss   Mon Nov 30 00:11:30 2026\n", // no comm
		"  600   501   600   700 Ss   Mon Nov 30 00:11:30 2026",   // no comm, no newline
		"  600   501   600 Ss   Mon Nov 30 00:11:30 2026 bash\n",  // a column missing
		"  6x0   501   600   700 Ss   Mon Nov 30 00:11:30 2026 bash\n",
		"  600   501   600   700 Ss   lun. 30 nov. 00:11:30 2026 bash\n", // another locale
		"  600   501   600   700 Ss   Mon Nov 30 00:11 2026 bash\n",
		"  -5   501   600   700 Ss   Mon Nov 30 00:11:30 2026 bash\n",
		"garbage\n",
	} {
		out := "    1     0     1     0 Ss   Mon Nov 30 00:01:03 2026     /sbin/launchd\n" + line
		if procs, err := ParsePS([]byte(out)); !errors.Is(err, ErrMalformed) {
			t.Errorf("ParsePS(%q) = %+v, %v; want ErrMalformed", line, procs, err)
		}
	}
	if procs, err := ParsePS(nil); err != nil || len(procs) != 0 {
		t.Errorf("ParsePS(nil) = %+v, %v", procs, err)
	}
}

func TestForegroundPgid(t *testing.T) {
	procs := fixture(t)
	if pg, ok := ForegroundPgid(procs, 600); !ok || pg != 700 {
		t.Errorf("ForegroundPgid(600) = %d, %v; want 700", pg, ok)
	}
	if _, ok := ForegroundPgid(procs, 501); ok {
		t.Error("a process without a terminal has a foreground group")
	}
	if _, ok := ForegroundPgid(procs, 999); ok {
		t.Error("a missing shell has a foreground group")
	}
}

func TestMembers(t *testing.T) {
	procs := fixture(t)
	if got := pids(Members(procs, 700)); !slices.Equal(got, []int{700, 701}) {
		t.Errorf("Members(700) = %v; want [700 701] (zombie 702 left out)", got)
	}
	if got := Members(procs, 12345); len(got) != 0 {
		t.Errorf("Members(12345) = %v", got)
	}
}

func TestDescendants(t *testing.T) {
	procs := fixture(t)
	if got := pids(Descendants(procs, 600)); !slices.Equal(got, []int{701, 702, 700, 704, 703}) {
		t.Errorf("Descendants(600) = %v; want children first [701 702 700 704 703]", got)
	}
	if got := pids(Descendants(procs, 0)); len(got) != 8 || got[len(got)-1] != 1 {
		t.Errorf("Descendants(0) = %v; want all 8 others, launchd last", got)
	}
	if got := Descendants(procs, 704); len(got) != 0 {
		t.Errorf("Descendants(leaf) = %v", got)
	}
	// A parent loop (pid reuse caught mid-change) must not hang.
	loop := []Proc{{PID: 2, PPID: 3}, {PID: 3, PPID: 2}}
	if got := pids(Descendants(loop, 2)); !slices.Equal(got, []int{3}) {
		t.Errorf("Descendants(loop) = %v", got)
	}
}

func TestSnapshot(t *testing.T) {
	out, err := os.ReadFile("testdata/ps.txt")
	if err != nil {
		t.Fatal(err)
	}
	var gotName string
	var gotArgs []string
	run := func(ctx context.Context, name string, args ...string) ([]byte, error) {
		gotName, gotArgs = name, args
		return out, nil
	}
	procs, err := Snapshot(context.Background(), run)
	if err != nil || len(procs) != 9 {
		t.Fatalf("Snapshot = %d procs, %v", len(procs), err)
	}
	if gotName != "ps" || !slices.Equal(gotArgs, []string{"-axo", "pid=,ppid=,pgid=,tpgid=,stat=,lstart=,comm="}) {
		t.Errorf("ran %s %q", gotName, gotArgs)
	}

	boom := errors.New("boom")
	if _, err := Snapshot(context.Background(), func(context.Context, string, ...string) ([]byte, error) {
		return nil, boom
	}); !errors.Is(err, boom) {
		t.Errorf("runner error = %v; want it wrapped", err)
	}
	if _, err := Snapshot(context.Background(), func(context.Context, string, ...string) ([]byte, error) {
		return []byte("not ps\n"), nil
	}); !errors.Is(err, ErrMalformed) {
		t.Errorf("bad output = %v; want ErrMalformed", err)
	}
}
