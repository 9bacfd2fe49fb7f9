//go:build linux

package sandbox

import (
	"bytes"
	"encoding/binary"
	"io"
	"runtime"
	"testing"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// filterABIs are the ABI sets seccompProgram is built for, each run on
// any machine: the program is pure.
var filterABIs = []struct {
	goarch         string
	native, compat seccompABI
	x32Bit         uint32
}{
	{"amd64", seccompABI{unix.AUDIT_ARCH_X86_64, 16}, seccompABI{unix.AUDIT_ARCH_I386, 54}, 0x40000000},
	{"arm64", seccompABI{unix.AUDIT_ARCH_AARCH64, 29}, seccompABI{unix.AUDIT_ARCH_ARM, 54}, 0},
	{"no compat ABI", seccompABI{unix.AUDIT_ARCH_X86_64, 16}, seccompABI{}, 0},
}

// seccompData lays out the struct seccomp_data the filter reads, for
// x/net/bpf's VM. The VM loads words big endian where the kernel loads
// them in the machine's order, so each 32-bit word is written big endian
// at the offset it has on a little-endian machine (args[1]: low word at
// 24, high word at 28). The real kernel's reading of args[1] is checked
// end to end (test/sandbox_tiocsti_test.go, the request with high bits).
func seccompData(arch, nr uint32, arg1 uint64) []byte {
	b := make([]byte, 64)
	binary.BigEndian.PutUint32(b[offNR:], nr)
	binary.BigEndian.PutUint32(b[offArch:], arch)
	binary.BigEndian.PutUint32(b[offArg1Low:], uint32(arg1))
	binary.BigEndian.PutUint32(b[offArg1Low+4:], uint32(arg1>>32))
	return b
}

func TestSeccompProgram(t *testing.T) {
	const (
		allow = unix.SECCOMP_RET_ALLOW
		deny  = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
		kill  = unix.SECCOMP_RET_KILL_PROCESS
	)
	for _, abis := range filterABIs {
		t.Run(abis.goarch, func(t *testing.T) {
			prog := seccompProgram(abis.native, abis.compat, abis.x32Bit)
			insns := make([]bpf.Instruction, len(prog))
			for i, in := range prog {
				insns[i] = bpf.RawInstruction{Op: in.Code, Jt: in.Jt, Jf: in.Jf, K: in.K}.Disassemble()
				if _, raw := insns[i].(bpf.RawInstruction); raw {
					t.Fatalf("instruction %d %+v is not classic BPF", i, in)
				}
			}
			vm, err := bpf.NewVM(insns)
			if err != nil {
				t.Fatalf("NewVM: %v\n%v", err, insns)
			}
			n, c := abis.native, abis.compat
			type call struct {
				what     string
				arch, nr uint32
				arg1     uint64
				want     uint32
			}
			calls := []call{
				{"ioctl TIOCSTI", n.arch, n.ioctl, unix.TIOCSTI, deny},
				{"ioctl TIOCSTI, high bits set", n.arch, n.ioctl, 0x1_0000_0000 | unix.TIOCSTI, deny},
				{"ioctl TIOCSTI, all high bits set", n.arch, n.ioctl, 0xffff_ffff_0000_0000 | unix.TIOCSTI, deny},
				{"ioctl TIOCLINUX", n.arch, n.ioctl, unix.TIOCLINUX, deny},
				{"ioctl TIOCLINUX, high bits set", n.arch, n.ioctl, 0x8000_0000_0000_0000 | unix.TIOCLINUX, deny},
				{"ioctl TCGETS", n.arch, n.ioctl, unix.TCGETS, allow},
				{"ioctl TIOCSWINSZ", n.arch, n.ioctl, unix.TIOCSWINSZ, allow},
				{"ioctl, TIOCSTI in the high word only", n.arch, n.ioctl, unix.TIOCSTI << 32, allow},
				{"another call, TIOCSTI as its second argument", n.arch, n.ioctl + 1, unix.TIOCSTI, allow},
				{"system call 0", n.arch, 0, 0, allow},
				{"a foreign architecture", unix.AUDIT_ARCH_PPC64LE, n.ioctl, unix.TCGETS, kill},
			}
			if abis.x32Bit != 0 {
				calls = append(calls,
					call{"x32 ioctl TIOCSTI", n.arch, abis.x32Bit | 514, unix.TIOCSTI, deny},
					call{"x32 read", n.arch, abis.x32Bit, 0, deny},
					call{"system call -1", n.arch, 0xffff_ffff, 0, deny},
				)
			}
			if c.arch != 0 {
				calls = append(calls,
					call{"compat ioctl TIOCSTI", c.arch, c.ioctl, unix.TIOCSTI, deny},
					call{"compat ioctl TIOCLINUX", c.arch, c.ioctl, unix.TIOCLINUX, deny},
					call{"compat ioctl TCGETS", c.arch, c.ioctl, unix.TCGETS, allow},
					call{"compat call with the native ioctl number", c.arch, n.ioctl, unix.TIOCSTI, allow},
				)
			} else {
				calls = append(calls, call{"a 32-bit ABI the filter was not given", unix.AUDIT_ARCH_I386, 54, unix.TCGETS, kill})
			}
			for _, tc := range calls {
				got, err := vm.Run(seccompData(tc.arch, tc.nr, tc.arg1))
				if err != nil || uint32(got) != tc.want {
					t.Errorf("%s (arch %#x, nr %#x, request %#x): %#x %v, want %#x", tc.what, tc.arch, tc.nr, tc.arg1, got, err, tc.want)
				}
			}
		})
	}
}

// The filter for this machine is the one tested above, and bwrap reads it
// from the start of a memfd nobody can change.
func TestSeccompFile(t *testing.T) {
	native, compat, x32Bit, ok := seccompABIs()
	if !ok {
		t.Skipf("no seccomp filter for %s", runtime.GOARCH)
	}
	var tested bool
	for _, abis := range filterABIs {
		if abis.goarch == runtime.GOARCH {
			tested = abis.native == native && abis.compat == compat && abis.x32Bit == x32Bit
		}
	}
	if !tested {
		t.Fatalf("seccompABIs on %s: %+v %+v %#x, not the set TestSeccompProgram runs", runtime.GOARCH, native, compat, x32Bit)
	}
	prog := seccompProgram(native, compat, x32Bit)
	f, err := seccompFile(prog)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	want := encode(prog)
	if !bytes.Equal(got, want) || len(want) != 8*len(prog) {
		t.Fatalf("memfd holds %x, want the %d instructions %x", got, len(prog), want)
	}
	first := prog[0] // ld [arch]: code 0x20, k 4
	if binary.NativeEndian.Uint16(want) != first.Code || binary.NativeEndian.Uint32(want[4:]) != first.K || first.Code != 0x20 || first.K != 4 {
		t.Fatalf("first instruction encoded as %x, want ld [4]", want[:8])
	}
	if _, err := f.WriteAt([]byte{0}, 0); err == nil {
		t.Fatal("the sealed filter was overwritten")
	}
}
