package record

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// A capped record (Options.MaxBytes) is a sequence of segment files: the
// first is the path the Writer was given, the next ones the path with
// ".1", ".2", ... appended. Every segment after the first starts with a
// KindCheckpoint record, and the chain runs on through the segments as
// if they were one file, so that the segments that remain, read in order,
// are a chain that verifies from its first checkpoint. When the files'
// total would pass MaxBytes, the oldest segments are removed (never the
// one being written).

// segmentPath is the path of segment i of the record at base.
func segmentPath(base string, i int) string {
	if i == 0 {
		return base
	}
	return base + "." + strconv.Itoa(i)
}

// Segments lists the segment files of the record at base that exist,
// oldest first. A record that was never capped is its one file.
func Segments(base string) ([]string, error) {
	dir, name := filepath.Split(base)
	if dir == "" {
		dir = "."
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	type seg struct {
		i    int
		path string
	}
	var segs []seg
	for _, e := range ents {
		n := e.Name()
		if n == name {
			segs = append(segs, seg{0, base})
			continue
		}
		rest, ok := strings.CutPrefix(n, name+".")
		if !ok {
			continue
		}
		i, err := strconv.Atoi(rest)
		if err != nil || i <= 0 || strconv.Itoa(i) != rest {
			continue
		}
		segs = append(segs, seg{i, segmentPath(base, i)})
	}
	if len(segs) == 0 {
		return nil, fmt.Errorf("record: %s: %w", base, os.ErrNotExist)
	}
	sort.Slice(segs, func(a, b int) bool { return segs[a].i < segs[b].i })
	paths := make([]string, len(segs))
	for k, s := range segs {
		paths[k] = s.path
	}
	return paths, nil
}

// segmentReader reads the segments of a record one after the other,
// holding one file open at a time.
type segmentReader struct {
	paths []string
	f     *os.File
}

func (s *segmentReader) Read(p []byte) (int, error) {
	for {
		if s.f == nil {
			if len(s.paths) == 0 {
				return 0, io.EOF
			}
			f, err := os.Open(s.paths[0])
			if err != nil {
				return 0, fmt.Errorf("record: %w", err)
			}
			s.f, s.paths = f, s.paths[1:]
		}
		n, err := s.f.Read(p)
		if errors.Is(err, io.EOF) {
			s.f.Close()
			s.f = nil
			if n > 0 {
				return n, nil
			}
			continue
		}
		return n, err
	}
}

func (s *segmentReader) Close() error {
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f = nil
	return err
}

// createFile creates a record file: 0600, and never over an existing one.
func createFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	return f, nil
}

// syncDir makes the files created or removed in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
