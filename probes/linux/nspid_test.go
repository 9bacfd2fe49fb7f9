package linux

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestNamespacePIDs(t *testing.T) {
	// The test process: its last NSpid is its pid in its own namespace.
	ns, err := NamespacePIDs(FS{}, os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if ns[0] != os.Getpid() {
		t.Fatalf("own NSpid %v, want %d first", ns, os.Getpid())
	}
	if _, err := NamespacePIDs(FS{}, 1<<30); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing pid: %v, want ErrNotFound", err)
	}
	dir := t.TempDir()
	for pid, status := range map[string]string{
		"7":  "Name:\tsleep\nNSpid:\t7\t1\nSigCgt:\t0\n", // a sandbox's init
		"8":  "Name:\tsleep\nNSpid:\t8\t5\n",             // a process inside one
		"9":  "Name:\tsleep\nNSpid:\t9\n",                // the root namespace
		"10": "Name:\tx\nNSpid:\t10\tx\n",
		"11": "Name:\tx\nNSpid:\t\n",
		"12": "Name:\tx\n",
	} {
		if err := os.MkdirAll(filepath.Join(dir, pid), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, pid, "status"), []byte(status), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fix := FS{Root: dir}
	for pid, want := range map[int]struct {
		ns   []int
		init bool
	}{7: {[]int{7, 1}, true}, 8: {[]int{8, 5}, false}, 9: {[]int{9}, false}} {
		ns, err := NamespacePIDs(fix, pid)
		if err != nil || !slices.Equal(ns, want.ns) {
			t.Fatalf("pid %d: %v %v, want %v", pid, ns, err, want.ns)
		}
		if init, err := IsNamespaceInit(fix, pid); err != nil || init != want.init {
			t.Fatalf("pid %d: IsNamespaceInit %v %v, want %v", pid, init, err, want.init)
		}
	}
	for _, pid := range []int{10, 11, 12} {
		if _, err := NamespacePIDs(fix, pid); err == nil {
			t.Fatalf("pid %d: malformed status accepted", pid)
		}
		if _, err := IsNamespaceInit(fix, pid); err == nil {
			t.Fatalf("pid %d: IsNamespaceInit accepted a malformed status", pid)
		}
	}
}
