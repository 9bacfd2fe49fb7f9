package faulty

import (
	"errors"
	"fmt"

	"github.com/ptyactor/ptyactor/backend"
)

// Op names a backend call that faults can be scripted for.
type Op string

const (
	OpSpawn    Op = "spawn"    // Backend.Spawn
	OpTryWrite Op = "trywrite" // the send actor's inline write (backend.TryWriter): a panic fails the send
	OpWrite    Op = "write"    // backend.Session.Write, for input TryWrite left
	OpSignal   Op = "signal"   // backend.Session.Signal, including the runtime's SIGINT on cancel
	OpProbe    Op = "probe"    // backend.StdinProber.ProbeStdin, the exact tier
	OpClose    Op = "close"    // backend.Session.Close, the teardown
	// OpTakeOutput is backend.Session.TakeOutput, which the runtime calls
	// on the send actor's goroutine: a panic there is a send actor failure.
	OpTakeOutput Op = "takeoutput"
	// OpRead is backend.Session.Read, which the runtime calls on the
	// session actor's goroutine: a panic there is a session actor failure.
	OpRead Op = "read"
)

// ErrClosed is returned by a call that was blocked by Hang when its session
// was closed, as a real terminal's write fails once its master is closed.
var ErrClosed = errors.New("faulty: session closed")

type kind int

const (
	kindFail kind = iota + 1
	kindHang
	kindPanic
	kindObserve
	kindUnknown
	kindExit
	kindBytewise
	kindOutputAfterExit
	kindSilent
)

var kindNames = map[kind]string{
	kindFail: "Fail", kindHang: "Hang", kindPanic: "Panic", kindObserve: "Observe",
	kindUnknown: "Unknown", kindExit: "Exit", kindBytewise: "Bytewise",
	kindOutputAfterExit: "OutputAfterExit", kindSilent: "Silent",
}

// allowed lists the faults each operation can express.
var allowed = map[Op][]kind{
	OpSpawn:      {kindFail, kindHang, kindExit, kindSilent},
	OpTryWrite:   {kindFail, kindPanic},
	OpWrite:      {kindFail, kindHang, kindExit, kindBytewise, kindOutputAfterExit},
	OpSignal:     {kindFail},
	OpProbe:      {kindFail, kindHang, kindPanic, kindObserve, kindUnknown},
	OpClose:      {kindFail, kindHang},
	OpTakeOutput: {kindPanic},
	OpRead:       {kindFail, kindPanic},
}

// Fault is what one scripted call does instead of its normal behaviour.
// Build one with the constructors below.
type Fault struct {
	kind    kind
	err     error
	release <-chan struct{}
	value   any
	obs     backend.StdinObservation
	code    int
}

func (f Fault) String() string { return kindNames[f.kind] }

// check panics when op cannot express f: a script that asks for the
// impossible must fail the test that wrote it, not pass vacuously.
func (f Fault) check(op Op) {
	for _, k := range allowed[op] {
		if k == f.kind {
			return
		}
	}
	panic(fmt.Sprintf("faulty: %s cannot be scripted for %s", f, op))
}

// Fail makes the call return err. For OpClose the error is a
// *messages.CleanupError wrapping err, with the shell as survivor, and the
// session stays open so a later close can succeed. For OpSpawn nothing was
// started. Every operation accepts it.
func Fail(err error) Fault { return Fault{kind: kindFail, err: err} }

// Hang blocks the call until it is abandoned: its context ends (OpSpawn,
// OpWrite, OpClose return an error wrapping context.Cause) or, for a probe
// (which takes no context: reading /proc can block on a process stuck in
// the kernel) and for writes, the session is closed (ErrClosed). Nothing of
// the call takes effect. OpSignal cannot hang; Backend.Hold keeps a signal
// (or any call) in flight without changing its outcome.
func Hang() Fault { return Fault{kind: kindHang} }

// HangUntil blocks like Hang, but a close of release ends the block and the
// call then proceeds normally: a slow call rather than a stuck one.
func HangUntil(release <-chan struct{}) Fault { return Fault{kind: kindHang, release: release} }

// Panic makes the call panic with v. Only calls the runtime makes on an
// actor's goroutine can express it (OpProbe, OpTryWrite, OpTakeOutput): a
// panic in a goroutine of its own would end the test binary, as it would
// end a server.
func Panic(v any) Fault { return Fault{kind: kindPanic, value: v} }

// Observe makes OpProbe report obs, whatever the session is doing: a probe
// that lies.
func Observe(obs backend.StdinObservation) Fault { return Fault{kind: kindObserve, obs: obs} }

// Unknown makes OpProbe report a supported platform on which nothing is
// seen waiting, as a probe that could not read the process would: the
// runtime must fall back to the prompt marker, silence or its deadline.
func Unknown() Fault { return Fault{kind: kindUnknown} }

// Exit ends the shell with status code. For OpWrite the input lands (and is
// echoed) and the shell exits before answering: the process exits mid-send.
// For OpSpawn the shell prints its banner and exits before its first prompt.
func Exit(code int) Fault { return Fault{kind: kindExit, code: code} }

// Bytewise makes OpWrite deliver the echo and the answer one byte per
// output fact, as a slow terminal would.
func Bytewise() Fault { return Fault{kind: kindBytewise} }

// OutputAfterExit makes OpWrite report the shell's exit first and the
// echo and answer afterwards: output that arrives after the exit fact.
func OutputAfterExit(code int) Fault { return Fault{kind: kindOutputAfterExit, code: code} }

// Silent makes OpSpawn start a shell that never prints anything: its
// startup only ends by the caller's cancellation or the startup deadline.
func Silent() Fault { return Fault{kind: kindSilent} }
