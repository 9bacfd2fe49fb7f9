package linux

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// fakeProc is a ProcReader and MemReader over Go maps, for the decoding
// permutations and for failures a directory tree cannot express (a read that
// fails, a syscall line that changes while a thread is inspected).
type fakeProc struct {
	files map[string]string
	links map[string]string
	errs  map[string]error // by path, for any kind of read
	mem   map[int][]memBlock
	// memErr fails every ReadMem of a pid.
	memErr map[int]error
	// onRead runs after every ReadFile, to change the tree mid-probe.
	onRead func(path string)
	// reads counts reads by path.
	reads map[string]int
}

type memBlock struct {
	addr uint64
	b    []byte
}

func newFake() *fakeProc {
	return &fakeProc{
		files:  map[string]string{},
		links:  map[string]string{},
		errs:   map[string]error{},
		mem:    map[int][]memBlock{},
		memErr: map[int]error{},
		reads:  map[string]int{},
	}
}

func notExist(op, p string) error { return &fs.PathError{Op: op, Path: p, Err: fs.ErrNotExist} }

func (f *fakeProc) ReadFile(p string) ([]byte, error) {
	f.reads[p]++
	defer func() {
		if f.onRead != nil {
			f.onRead(p)
		}
	}()
	if err, ok := f.errs[p]; ok {
		return nil, err
	}
	s, ok := f.files[p]
	if !ok {
		return nil, notExist("open", p)
	}
	return []byte(s), nil
}

func (f *fakeProc) ReadLink(p string) (string, error) {
	f.reads[p]++
	if err, ok := f.errs[p]; ok {
		return "", err
	}
	s, ok := f.links[p]
	if !ok {
		return "", notExist("readlink", p)
	}
	return s, nil
}

// ReadDirNames lists the entries implied by the stored paths.
func (f *fakeProc) ReadDirNames(dir string) ([]string, error) {
	if err, ok := f.errs[dir]; ok {
		return nil, err
	}
	seen := map[string]bool{}
	var names []string
	for _, m := range []map[string]string{f.files, f.links} {
		for p := range m {
			rest, ok := strings.CutPrefix(p, dir+"/")
			if dir == "." {
				rest, ok = p, true
			}
			if !ok {
				continue
			}
			name, _, _ := strings.Cut(rest, "/")
			if !seen[name] {
				seen[name] = true
				names = append(names, name)
			}
		}
	}
	if len(names) == 0 {
		return nil, notExist("open", dir)
	}
	return names, nil
}

func (f *fakeProc) ReadMem(pid int, addr uint64, n int) ([]byte, error) {
	if err := f.memErr[pid]; err != nil {
		return nil, err
	}
	for _, blk := range f.mem[pid] {
		if addr >= blk.addr && addr-blk.addr+uint64(n) <= uint64(len(blk.b)) {
			off := addr - blk.addr
			return append([]byte(nil), blk.b[off:off+uint64(n)]...), nil
		}
	}
	return nil, &fs.PathError{Op: "pread", Path: strconv.Itoa(pid) + "/mem", Err: syscall.EIO}
}

// proc adds /proc/<pid>/stat. Session is 100 and the terminal's foreground
// group 200 throughout.
func (f *fakeProc) proc(pid, ppid, pgrp int, state byte, comm string) {
	f.files[fmt.Sprintf("%d/stat", pid)] = fmt.Sprintf(
		"%d (%s) %c %d %d 100 34819 200 4194304 0 0 0 0 0 0 0 0 20 0 1 0 %d 3133440 389 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
		pid, comm, state, ppid, pgrp, 1000+pid)
}

// task adds a thread with its syscall line, switch count and children.
func (f *fakeProc) task(pid, tid int, syscall string, switches uint64, children ...int) {
	base := taskPath(pid, tid)
	f.files[base+"/syscall"] = syscall + "\n"
	f.files[base+"/status"] = fmt.Sprintf("Name:\tx\nState:\tS (sleeping)\nTgid:\t%d\nPid:\t%d\nvoluntary_ctxt_switches:\t%d\nnonvoluntary_ctxt_switches:\t7\n", pid, tid, switches)
	var cs []string
	for _, c := range children {
		cs = append(cs, strconv.Itoa(c)+" ")
	}
	f.files[base+"/children"] = strings.Join(cs, "")
}

func (f *fakeProc) fd(pid, fd int, target string) {
	f.links[fmt.Sprintf("%d/fd/%d", pid, fd)] = target
}

func (f *fakeProc) fdinfo(pid, fd int, text string) {
	f.files[fmt.Sprintf("%d/fdinfo/%d", pid, fd)] = text
}

func (f *fakeProc) poke(pid int, addr uint64, b []byte) {
	f.mem[pid] = append(f.mem[pid], memBlock{addr: addr, b: b})
}

// Stack pointer and program counter of a 64-bit task.
const (
	testSP = 0x7ffc7ff5a610
	testPC = 0x7f8624efd954
)

// sc formats a blocked syscall line: nr, six arguments (missing ones are
// zero), sp and pc.
func sc(nr int64, args ...uint64) string {
	var a [6]uint64
	copy(a[:], args)
	return fmt.Sprintf("%d %#x %#x %#x %#x %#x %#x %#x %#x", nr, a[0], a[1], a[2], a[3], a[4], a[5], uint64(testSP), uint64(testPC))
}

// hexMem serves a fixture tree's mem.txt: lines "<pid> <addr> <hex bytes>",
// blank lines and # comments.
func hexMem(t *testing.T, file string) *fakeProc {
	t.Helper()
	f := newFake()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(string(b), "\n") {
		if line = strings.TrimSpace(line); line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var pid int
		var addr uint64
		var hex string
		if _, err := fmt.Sscanf(line, "%d %x %x", &pid, &addr, &hex); err != nil {
			t.Fatalf("%s:%d: %v", file, i+1, err)
		}
		f.poke(pid, addr, []byte(hex))
	}
	return f
}

// fixtureFS serves a tree under testdata/wait.
func fixtureFS(name string) FS { return FS{Root: path.Join("testdata/wait", name, "proc")} }
