package record

import (
	"bytes"
	"errors"
	"fmt"
	"os"
)

// OpenDir makes dir, the folder records are written in, with mode 0700
// (its parents too), and refuses (*ModeError) a folder that exists with
// any access for group or others: a record holds everything typed in a
// terminal.
func OpenDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("record: %w", err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("record: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("record: %s: %w", dir, errors.New("not a directory"))
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return &ModeError{Path: dir, Mode: fi.Mode()}
	}
	return nil
}

// MinKeyBytes is the shortest key ReadKeyFile accepts.
const MinKeyBytes = 16

// ReadKeyFile reads a chain key: the file's bytes, a trailing newline
// removed. It refuses (*ModeError) a file group or others may read or
// write, since whoever reads the key can write a chain that verifies,
// and a key shorter than MinKeyBytes.
func ReadKeyFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("record: key: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("record: key: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, &ModeError{Path: path, Mode: fi.Mode()}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("record: key: %w", err)
	}
	b = bytes.TrimSuffix(bytes.TrimSuffix(b, []byte("\n")), []byte("\r"))
	if len(b) < MinKeyBytes {
		return nil, fmt.Errorf("record: key %s: %d bytes, at least %d needed", path, len(b), MinKeyBytes)
	}
	return b, nil
}
