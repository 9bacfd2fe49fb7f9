package darwin

import (
	"errors"
	"slices"
	"syscall"
	"testing"
)

func TestWithSID(t *testing.T) {
	for _, tc := range []struct {
		name    string
		pid     int
		sid     int
		err     error
		wantSID int
		wantErr error
		noCall  bool
	}{
		{name: "member", pid: 700, sid: 600, wantSID: 600},
		{name: "leader", pid: 600, sid: 600, wantSID: 600},
		{name: "gone before getsid", pid: 701, err: syscall.ESRCH, wantSID: -1},
		{name: "unreadable", pid: 702, err: syscall.EPERM, wantErr: syscall.EPERM},
		// getsid(0) would answer for the caller, not for kernel_task.
		{name: "kernel_task", pid: 0, sid: 4242, wantSID: 0, noCall: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			called := false
			getsid := func(pid int) (int, error) {
				called = true
				if pid != tc.pid {
					t.Errorf("getsid(%d); want getsid(%d)", pid, tc.pid)
				}
				return tc.sid, tc.err
			}
			in := Kinfo{PID: tc.pid, PPID: 1, Comm: "x", SID: 99}
			got, err := withSID(in, getsid)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("withSID = %+v, %v; want %v", got, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := in
			want.SID = tc.wantSID
			if got != want {
				t.Errorf("withSID = %+v; want %+v", got, want)
			}
			if called == tc.noCall {
				t.Errorf("getsid called = %v; want %v", called, !tc.noCall)
			}
		})
	}
}

func TestWithSIDs(t *testing.T) {
	sids := map[int]int{1: 1, 600: 600, 700: 600}
	getsid := func(pid int) (int, error) {
		if sid, ok := sids[pid]; ok {
			return sid, nil
		}
		return 0, syscall.ESRCH
	}
	in := []Kinfo{{PID: 0}, {PID: 1}, {PID: 600}, {PID: 700}, {PID: 701}}
	got, err := withSIDs(in, getsid)
	if err != nil {
		t.Fatal(err)
	}
	var pairs [][2]int
	for _, k := range got {
		pairs = append(pairs, [2]int{k.PID, k.SID})
	}
	if want := [][2]int{{0, 0}, {1, 1}, {600, 600}, {700, 600}, {701, -1}}; !slices.Equal(pairs, want) {
		t.Errorf("withSIDs = %v; want %v (kernel order kept)", pairs, want)
	}
	if in[2].SID != 0 {
		t.Error("withSIDs changed its input")
	}

	boom := func(pid int) (int, error) {
		if pid == 700 {
			return 0, syscall.EPERM
		}
		return getsid(pid)
	}
	if got, err := withSIDs(in, boom); !errors.Is(err, syscall.EPERM) || got != nil {
		t.Errorf("withSIDs with an unreadable process = %v, %v; want nil, EPERM", got, err)
	}
}

func TestKinfoAlive(t *testing.T) {
	for st, want := range map[int8]bool{SIDL: true, SRUN: true, SSLEEP: true, SSTOP: true, SZOMB: false} {
		if got := (Kinfo{Stat: st}).Alive(); got != want {
			t.Errorf("Alive(stat %d) = %v; want %v", st, got, want)
		}
	}
}
