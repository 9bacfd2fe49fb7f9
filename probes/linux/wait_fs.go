package linux

import (
	"bytes"
	"errors"
	"io/fs"
	"sync"
)

var (
	errTooBig    = errors.New("linux: file larger than the read buffer")
	errShortRead = errors.New("linux: short read")
)

// fastFS is the ProcReader ProbeGroup uses in place of an FS: ReadFile and
// ReadDirNames use raw syscalls and one reused buffer (a probe reads a dozen
// small files), and ReadFile returns a copy, as it must. Files larger than the
// buffer and links go through FS.
type fastFS struct {
	FS
	root string
	buf  []byte
}

// bufPool holds the read buffers of fastFS.
var bufPool = sync.Pool{New: func() any { return new([8192]byte) }}

// newFastFS returns a reader over f and a function that releases its
// buffer; the reader must not be used after release.
func newFastFS(f FS) (_ *fastFS, release func(), _ error) {
	root, err := f.path(".")
	if err != nil {
		return nil, nil, err
	}
	buf := bufPool.Get().(*[8192]byte)
	return &fastFS{FS: f, root: root, buf: buf[:]}, func() { bufPool.Put(buf) }, nil
}

func (f *fastFS) ReadFile(p string) ([]byte, error) {
	b, err := f.readShared(p)
	if err != nil {
		return nil, err
	}
	return bytes.Clone(b), nil
}

// readShared is ReadFile without the copy: the result is valid until the
// next read through f.
func (f *fastFS) readShared(p string) ([]byte, error) {
	full := f.root + "/" + p
	b, err := readSmall(full, f.buf)
	if errors.Is(err, errTooBig) {
		return f.FS.ReadFile(p)
	}
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: full, Err: err}
	}
	return b, nil
}

func (f *fastFS) ReadDirNames(p string) ([]string, error) {
	full := f.root + "/" + p
	names, err := readDirNames(full, f.buf)
	if err != nil {
		return nil, &fs.PathError{Op: "readdirent", Path: full, Err: err}
	}
	return names, nil
}
