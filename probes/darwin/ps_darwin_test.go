//go:build darwin

package darwin

import (
	"context"
	"os"
	"testing"
	"time"
)

func TestSnapshotReal(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	procs, err := Snapshot(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range procs {
		if p.PID == os.Getpid() {
			if p.PPID != os.Getppid() || p.Start == "" || !p.Alive() {
				t.Errorf("self = %+v", p)
			}
			return
		}
	}
	t.Fatalf("own pid %d missing from %d processes", os.Getpid(), len(procs))
}
