package teardown

import (
	"errors"
	"os"
	"testing"
)

func TestIdentify(t *testing.T) {
	if !platformSupported {
		if _, err := Identify(os.Getpid()); !errors.Is(err, ErrUnsupported) {
			t.Fatalf("Identify = %v; want ErrUnsupported", err)
		}
		return
	}
	id, err := Identify(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	s, err := hostTable().stat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if id != s.Identity() || id.StartTime == 0 {
		t.Fatalf("Identify = %+v; the table says %+v", id, s.Identity())
	}
	if again, err := Identify(os.Getpid()); err != nil || again != id {
		t.Fatalf("second Identify = %+v, %v; want %+v", again, err, id)
	}
	if _, err := Identify(fakeBase); !errors.Is(err, ErrGone) {
		t.Fatalf("Identify(no such pid) = %v; want ErrGone", err)
	}
	for _, pid := range []int{0, -1} {
		if _, err := Identify(pid); !errors.Is(err, ErrInvalidPID) {
			t.Fatalf("Identify(%d) = %v; want ErrInvalidPID", pid, err)
		}
	}
}
