package linux

import (
	"strconv"

	"golang.org/x/sys/unix"
)

// devTTY is /dev/tty (5:0): "the caller's controlling terminal".
var devTTY = unix.Mkdev(5, 0)

var _ fdStater = FS{}

// StatFD stats Root/<pid>/fd/<fd>, which follows the descriptor to its
// file.
func (f FS) StatFD(pid, fd int) (DeviceID, bool, error) {
	full, err := f.path(strconv.Itoa(pid) + "/fd/" + strconv.Itoa(fd))
	if err != nil {
		return DeviceID{}, false, err
	}
	var st unix.Stat_t
	for {
		err = unix.Stat(full, &st)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return DeviceID{}, false, gone(pid, err)
	}
	return DeviceID{Dev: st.Dev, Rdev: st.Rdev}, st.Mode&unix.S_IFMT == unix.S_IFCHR, nil
}

// TerminalDevice returns the identity of the device node at path, for
// Terminal.Device.
func TerminalDevice(path string) (*DeviceID, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return nil, err
	}
	return &DeviceID{Dev: st.Dev, Rdev: st.Rdev}, nil
}

func (h heldFiles) StatFD(pid, fd int) (DeviceID, bool, error) { return FS{}.StatFD(pid, fd) }
