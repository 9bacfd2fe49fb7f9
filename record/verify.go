package record

import (
	"errors"
	"io"
)

// Verify reads a whole record from r and checks its chain with key (nil
// for a plain chain). It returns a nil error only for an intact, closed
// chain; otherwise a *CorruptError, an *IncompleteError (the Report then
// says how far it verifies), ErrKeyRequired, or a read error.
func Verify(r io.Reader, key []byte) (Report, error) {
	return verify(NewReader(r, key))
}

// VerifyFile is Verify of the record at path, with its segments.
func VerifyFile(path string, key []byte) (Report, error) {
	r, err := Open(path, key)
	if err != nil {
		return Report{}, err
	}
	defer r.Close()
	return verify(r)
}

func verify(r *Reader) (Report, error) {
	for {
		if _, err := r.Next(); err != nil {
			if errors.Is(err, io.EOF) {
				return r.Report(), nil
			}
			return r.Report(), err
		}
	}
}
