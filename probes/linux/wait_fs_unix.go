//go:build unix

package linux

import (
	"errors"
	"syscall"
)

// readSmall reads the whole file at path into buf with raw syscalls: open,
// read until EOF, close. It skips what os.ReadFile adds (fstat, a growing
// buffer, the file's finalizer), which is most of the cost of reading a
// small /proc file. A file that does not fit in buf is errTooBig.
func readSmall(path string, buf []byte) ([]byte, error) {
	fd, err := openRead(path)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	n := 0
	for {
		if n == len(buf) {
			return nil, errTooBig
		}
		m, err := syscall.Read(fd, buf[n:])
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if m == 0 {
			return buf[:n], nil
		}
		n += m
	}
}

// preadFile reads exactly n bytes at off of the file at path.
func preadFile(path string, off int64, n int) ([]byte, error) {
	fd, err := openRead(path)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	b := make([]byte, n)
	for done := 0; done < n; {
		m, err := syscall.Pread(fd, b[done:], off+int64(done))
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if m == 0 {
			return nil, errShortRead
		}
		done += m
	}
	return b, nil
}

func openRead(path string) (int, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if !errors.Is(err, syscall.EINTR) {
			return fd, err
		}
	}
}

// readDirNames lists the directory at path with raw getdents calls, using buf
// as the dirent buffer.
func readDirNames(path string, buf []byte) ([]string, error) {
	var fd int
	var err error
	for {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	var names []string
	for {
		n, err := syscall.ReadDirent(fd, buf)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			return names, nil
		}
		_, _, names = syscall.ParseDirent(buf[:n], -1, names)
	}
}
