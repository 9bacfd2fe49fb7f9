package tools

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ptyactor/ptyactor/actors"
	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// FuzzToolArgs calls every tool with arbitrary argument bytes. Whatever
// the bytes, a call returns (it never panics or hangs), a failure carries
// an error that matches one of the documented sentinels, and the text is
// valid UTF-8 within MaxResultBytes.
//
// The runtime is real (actors.Service); the backend is echoBackend, so an
// argument that passes validation reaches the service and a session
// without starting a process. Each input runs against a fresh owner with
// one open session, whose id replaces every "$SID" in the input, so
// well-formed calls get past NO_SESSION; the owner is disposed afterwards.
//
// which picks the tool (and, in its high bit, the toolset: a small
// MaxResultBytes with background sends, or the defaults without them);
// names beyond the tool list are unknown tools.
func FuzzToolArgs(f *testing.F) {
	rig := newArgRig(f)
	for i := range rig.names {
		for _, raw := range []string{"", "null", "{}", "[]", `"x"`, "{", `{"sessionId":"$SID"}`} {
			f.Add(uint8(i), []byte(raw))
			f.Add(uint8(i)|0x80, []byte(raw))
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, raw []byte) {
		ts := rig.small
		if which&0x80 != 0 {
			ts = rig.plain
		}
		name := rig.names[int(which&0x7f)%len(rig.names)]
		r := rig.call(t, ts, name, raw)
		limit := ts.Options().MaxResultBytes
		if len(r.Text) > limit {
			t.Errorf("%s(%q): %d bytes of text, over MaxResultBytes %d", name, raw, len(r.Text), limit)
		}
		if !utf8.ValidString(r.Text) {
			t.Errorf("%s(%q): text is not valid UTF-8: %q", name, raw, r.Text)
		}
		if !r.IsError {
			if r.Err != nil || r.Structured == nil {
				t.Errorf("%s(%q): success with err %v, value %v", name, raw, r.Err, r.Structured)
			}
			return
		}
		if r.Err == nil || !strings.HasPrefix(r.Text, "Error: ") || r.Structured != nil {
			t.Errorf("%s(%q): failure with err %v, text %q, value %v", name, raw, r.Err, r.Text, r.Structured)
		}
		if !documented(r.Err) {
			t.Errorf("%s(%q): error %v (%T) matches no documented sentinel", name, raw, r.Err, r.Err)
		}
	})
}

// argRig is the fuzz target's runtime: a Service over echoBackend and two
// toolsets on it.
type argRig struct {
	svc          *actors.Service
	small, plain *Toolset
	names        []string // every tool of the fullest toolset, then an unknown one
}

func newArgRig(tb testing.TB) *argRig {
	tb.Helper()
	svc := testkit.Service(tb, testkit.ServiceOptions{Config: messages.DefaultConfig(), Backends: []backend.Backend{echoBackend{}}})
	r := &argRig{svc: svc}
	var err error
	if r.small, err = New(svc, Options{MaxResultBytes: MinMaxResultBytes + 36}); err != nil {
		tb.Fatal(err)
	}
	if r.plain, err = New(svc, Options{DisableRunInBackground: true}); err != nil {
		tb.Fatal(err)
	}
	for _, d := range r.small.Definitions() {
		r.names = append(r.names, d.Name)
	}
	r.names = append(r.names, "terminal_exec")
	return r
}

// call runs one tool call for a fresh owner that has one open session,
// whose id replaces "$SID" in raw, and disposes the owner afterwards.
func (r *argRig) call(t *testing.T, ts *Toolset, name string, raw []byte) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	owner, err := r.svc.NewOwner(ctx, "fuzz")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := r.svc.DisposeOwner(ctx, owner); err != nil {
			t.Fatalf("DisposeOwner: %v", err)
		}
	}()
	sp, err := r.svc.Spawn(ctx, owner, messages.SpawnRequest{})
	if err != nil {
		t.Fatal(err)
	}
	raw = bytes.ReplaceAll(raw, []byte("$SID"), []byte(sp.ID()))
	res := ts.Call(ctx, owner, name, raw)
	if ctx.Err() != nil {
		t.Fatalf("%s(%q) did not return within the deadline", name, raw)
	}
	return res
}

// The rig reaches the service: well-formed calls succeed against the open
// session, and each kind of bad argument fails with its sentinel. Without
// this, the fuzz target could pass by rejecting everything.
func TestToolArgsRig(t *testing.T) {
	rig := newArgRig(t)
	for _, c := range []struct {
		ts   *Toolset
		name string
		raw  string
		want error // nil: success
	}{
		{rig.plain, TerminalSend, `{"sessionId":"$SID","text":"echo hi"}`, nil},
		{rig.small, TerminalSend, `{"sessionId":"$SID","text":"make","runInBackground":true}`, nil},
		{rig.plain, TerminalSend, `{"sessionId":"$SID","text":"make","runInBackground":true}`, ErrBackgroundDisabled},
		{rig.plain, TerminalOpen, `{"name":"dev"}`, nil},
		{rig.plain, TerminalOpen, `{"type":"nosuch"}`, messages.ErrNoBackend},
		{rig.plain, TerminalWait, `{"sessionId":"$SID","timeoutMs":50}`, nil},
		{rig.plain, TerminalWait, `{"sessionId":"$SID","pattern":"("}`, messages.ErrInvalidArgument},
		{rig.plain, TerminalWait, `{"sessionId":"$SID","timeoutMs":0}`, messages.ErrInvalidArgument},
		{rig.plain, TerminalSend, `{"sessionId":"$SID","text":"x","until":"later"}`, messages.ErrInvalidArgument},
		{rig.plain, TerminalSend, `{"sessionId":"$SID","text":"x","silenceMs":20,"until":"prompt"}`, nil},
		{rig.plain, TerminalRead, `{"sessionId":"$SID","count":1e2}`, nil},
		{rig.plain, TerminalRead, `{"sessionId":"$SID","count":1.5}`, messages.ErrInvalidArgument},
		{rig.plain, TerminalRead, "{\"sessionId\":\"$SID\",\"count\":\"\xff\"}", messages.ErrInvalidArgument},
		{rig.plain, TerminalRead, `{"sessionId":"$SID","offset":-1}`, messages.ErrInvalidArgument}, // the runtime's range check
		{rig.plain, TerminalRead, `{"sessionId":"$SID","count":0}`, messages.ErrInvalidArgument},
		{rig.plain, TerminalSignal, `{"sessionId":"$SID","signal":"SIGINT"}`, nil},
		{rig.plain, TerminalSignal, `{"sessionId":"$SID","signal":"SIGUSR1"}`, messages.ErrInvalidArgument}, // the runtime's closed set
		{rig.plain, TerminalSignal, `{"sessionId":"$SID","signal":"SIGKILL"}`, messages.ErrRefuseKillShell},
		{rig.plain, TerminalClose, `{"sessionId":"$SID"}`, nil},
		{rig.plain, TerminalClose, `{"sessionId":"pty-nope"}`, messages.ErrNoSession},
		{rig.plain, TerminalList, ``, nil},
		{rig.small, TaskOutput, `{"taskId":"t","wait":false}`, messages.ErrNoTask},
		{rig.plain, TaskKill, `{"taskId":"t"}`, ErrUnknownTool},
		{rig.plain, "terminal_exec", `{}`, ErrUnknownTool},
	} {
		r := rig.call(t, c.ts, c.name, []byte(c.raw))
		switch {
		case c.want == nil && r.IsError:
			t.Errorf("%s(%s): %v, want success", c.name, c.raw, r.Err)
		case c.want != nil && !errors.Is(r.Err, c.want):
			t.Errorf("%s(%s): %v (text %q), want %v", c.name, c.raw, r.Err, r.Text, c.want)
		case !utf8.ValidString(r.Text):
			t.Errorf("%s(%s): invalid UTF-8 %q", c.name, c.raw, r.Text)
		}
	}
}

// documented reports whether err matches a sentinel a tool call may fail
// with: this package's, or the runtime's.
func documented(err error) bool {
	for _, s := range []error{
		ErrUnknownTool, ErrNoAgent, ErrBackgroundDisabled, ErrSendAborted, ErrSecretPrompt,
		messages.ErrInvalidArgument, messages.ErrNoSession, messages.ErrNoTask, messages.ErrTaskEvicted, messages.ErrNoBackend,
		messages.ErrDuplicateName, messages.ErrSendActive, messages.ErrOwnerNotLive, messages.ErrServiceDisposing,
		messages.ErrSessionClosing, messages.ErrSessionExited, messages.ErrNoForeground, messages.ErrRefuseKillShell,
		messages.ErrTransport,
	} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

// echoBackend starts sessions that run nothing: input comes back as
// output followed by a verified prompt, so every send settles at once.
type echoBackend struct{}

func (echoBackend) Type() string { return "shell" }

func (echoBackend) Spawn(_ context.Context, _ messages.SpawnSpec, _ messages.Config, ev backend.Events) (backend.Session, error) {
	s := &echoSession{ev: ev}
	s.emit("$ ")
	return s, nil
}

type echoSession struct {
	ev backend.Events

	mu     sync.Mutex
	epoch  uint64
	out    strings.Builder
	status messages.SessionStatus
}

var _ backend.Session = (*echoSession)(nil)

// emit adds output and a prompt for the current epoch.
func (s *echoSession) emit(text string) {
	s.mu.Lock()
	s.out.WriteString(text)
	e := s.epoch
	s.mu.Unlock()
	s.ev.Output(e)
	s.ev.Prompt(backend.PromptFact{Epoch: e, ShellForeground: true})
}

func (s *echoSession) PID() int { return 1 << 22 } // above any pid_max: names no process
func (s *echoSession) BeginSend() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.epoch++
	s.out.Reset()
	return s.epoch
}
func (s *echoSession) EndSend() messages.SendRead { return s.TakeOutput() }
func (s *echoSession) Resume() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.epoch
}
func (s *echoSession) RearmPrompt() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.epoch++
	return s.epoch
}
func (s *echoSession) TakeOutput() messages.SendRead {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.out.String()
	s.out.Reset()
	return messages.SendRead{Delta: out}
}
func (s *echoSession) PromptReady() (int, bool) { return 0, true }
func (s *echoSession) Write(_ context.Context, p []byte) error {
	if bytes.HasSuffix(p, s.Enter()) {
		s.emit(strings.ToValidUTF8(string(p), "\uFFFD") + "\n$ ")
	}
	return nil
}
func (s *echoSession) Enter() []byte            { return []byte{'\r'} }
func (s *echoSession) Foreground() (int, error) { return s.PID(), nil }
func (s *echoSession) Signal(sig messages.Signal) (messages.SignalResult, error) {
	if sig == messages.SIGKILL {
		return messages.SignalResult{}, messages.ErrRefuseKillShell
	}
	return messages.SignalResult{Delivered: true, TargetPgid: s.PID()}, nil
}
func (s *echoSession) ReadSince(uint64) (messages.ReadResult, error) {
	return messages.ReadResult{}, nil
}
func (s *echoSession) Read(int, int) (messages.ReadResult, error) {
	return messages.ReadResult{Text: "$ ", TotalLines: 1, LineEnd: 1}, nil
}
func (s *echoSession) Status() messages.SessionStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status
}
func (s *echoSession) Close(context.Context, string) (messages.CloseReport, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status = messages.ExitedBySignal("SIGHUP")
	return messages.CloseReport{Status: s.status}, nil
}
