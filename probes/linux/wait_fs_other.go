//go:build !unix

package linux

import (
	"io"
	"os"
)

// readSmall reads the whole file at path; buf only bounds its size.
func readSmall(path string, buf []byte) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err == nil && len(b) >= len(buf) {
		return nil, errTooBig
	}
	return b, err
}

// preadFile reads exactly n bytes at off of the file at path.
func preadFile(path string, off int64, n int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, n)
	if _, err := f.ReadAt(b, off); err != nil {
		if err == io.EOF {
			err = errShortRead
		}
		return nil, err
	}
	return b, nil
}

// readDirNames lists the directory at path.
func readDirNames(path string, _ []byte) ([]string, error) {
	d, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.Readdirnames(-1)
}
