package actors

import (
	"context"
	"errors"
	"sync"

	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/messages"
)

// fakeBackend is a scripted backend for fault injection: every behaviour is
// a hook, so a test says exactly which fact arrives when.
type fakeBackend struct {
	typ string
	// spawn, when set, replaces the default (a session that prints a ready
	// prompt at once).
	spawn func(ctx context.Context, spec messages.SpawnSpec, ev backend.Events) (backend.Session, error)
}

func (b *fakeBackend) Type() string { return b.typ }

func (b *fakeBackend) Spawn(ctx context.Context, spec messages.SpawnSpec, _ messages.Config, ev backend.Events) (backend.Session, error) {
	if b.spawn != nil {
		return b.spawn(ctx, spec, ev)
	}
	s := newFakeSession(ev)
	s.emit("$ ", true, 0)
	return s, nil
}

// fakeSession echoes writes as output and answers each write with a prompt
// unless onWrite says otherwise.
type fakeSession struct {
	ev backend.Events

	mu        sync.Mutex
	epoch     uint64
	out       string
	closed    bool
	status    messages.SessionStatus
	onWrite   func(s *fakeSession, p []byte) error
	onClose   func() error
	onSignal  func(sig messages.Signal) error
	onTake    func()
	writes    []string
	signals   []messages.Signal
	closes    int
	promptOK  bool
	promptRet int
}

func newFakeSession(ev backend.Events) *fakeSession { return &fakeSession{ev: ev} }

// emit adds output and, with prompt, a verified prompt for the current epoch.
func (s *fakeSession) emit(text string, prompt bool, code int) {
	s.mu.Lock()
	s.out += text
	e := s.epoch
	if prompt {
		s.promptOK, s.promptRet = true, code
	}
	s.mu.Unlock()
	s.ev.Output(e)
	if prompt {
		s.ev.Prompt(backend.PromptFact{Epoch: e, ExitCode: code, ShellForeground: true})
	}
}

func (s *fakeSession) exit(code int) {
	s.mu.Lock()
	s.status = messages.ExitedWith(code)
	s.mu.Unlock()
	s.ev.Exited(messages.ExitedWith(code))
}

func (s *fakeSession) PID() int { return 4242 }
func (s *fakeSession) BeginSend() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.epoch++
	s.out, s.promptOK = "", false
	return s.epoch
}
func (s *fakeSession) EndSend() messages.SendRead { return s.TakeOutput() }
func (s *fakeSession) RearmPrompt() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.epoch++
	s.promptOK = false
	return s.epoch
}
func (s *fakeSession) TakeOutput() messages.SendRead {
	s.mu.Lock()
	hook := s.onTake
	out := s.out
	s.out = ""
	s.mu.Unlock()
	if hook != nil {
		hook()
	}
	return messages.SendRead{Delta: out}
}
func (s *fakeSession) PromptReady() (int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.promptRet, s.promptOK
}
func (s *fakeSession) Write(ctx context.Context, p []byte) error {
	s.mu.Lock()
	s.writes = append(s.writes, string(p))
	hook := s.onWrite
	s.mu.Unlock()
	if hook != nil {
		return hook(s, p)
	}
	s.emit(string(p)+"\n$ ", true, 0)
	return nil
}
func (s *fakeSession) Enter() []byte            { return []byte{'\r'} }
func (s *fakeSession) Foreground() (int, error) { return 4242, nil }
func (s *fakeSession) Status() messages.SessionStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status
}
func (s *fakeSession) Signal(sig messages.Signal) (messages.SignalResult, error) {
	s.mu.Lock()
	s.signals = append(s.signals, sig)
	hook := s.onSignal
	s.mu.Unlock()
	if hook != nil {
		if err := hook(sig); err != nil {
			return messages.SignalResult{}, err
		}
	}
	return messages.SignalResult{Delivered: true, TargetPgid: 4242}, nil
}
func (s *fakeSession) Read(messages.ReadRequest) (messages.ReadResult, error) {
	return messages.ReadResult{Text: "x", TotalLines: 1, LineEnd: 1}, nil
}
func (s *fakeSession) Close(context.Context, string) (messages.CloseReport, error) {
	s.mu.Lock()
	s.closes++
	hook := s.onClose
	s.mu.Unlock()
	if hook != nil {
		if err := hook(); err != nil {
			return messages.CloseReport{Survivors: []int{99}}, err
		}
	}
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	return messages.CloseReport{Killed: []int{4242}}, nil
}

var errInjected = errors.New("injected fault")
