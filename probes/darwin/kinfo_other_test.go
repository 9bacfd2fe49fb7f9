//go:build !darwin

package darwin

import (
	"errors"
	"testing"
)

func TestKinfoUnsupported(t *testing.T) {
	if _, err := ReadKinfo(1); !errors.Is(err, ErrUnsupported) {
		t.Errorf("ReadKinfo = %v; want ErrUnsupported", err)
	}
	if _, err := ListKinfo(); !errors.Is(err, ErrUnsupported) {
		t.Errorf("ListKinfo = %v; want ErrUnsupported", err)
	}
}
