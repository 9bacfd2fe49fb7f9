package local

import "github.com/ptyactor/ptyactor/messages"

// A send's life as the session sees it: the output epoch it begins
// (BeginSend, Resume, RearmPrompt), the output it takes (TakeOutput,
// EndSend; the cursors in transcript.go), and the prompt that ends it
// (PromptReady).

func (s *session) BeginSend() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.epoch++
	s.prompt.reset()
	s.collect()
	return s.epoch
}

func (s *session) Resume() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.send.ended.ok {
		s.collect()
		return s.epoch
	}
	// From where the previous send's output ended: what was printed since
	// is the wait's, and what that send showed is not shown again.
	s.send.from, s.send.before, s.send.taken = s.send.ended.line, s.send.ended.before, s.send.ended.line
	s.send.collecting = true
	return s.epoch
}

func (s *session) RearmPrompt() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.epoch++
	s.prompt.reset()
	return s.epoch
}

func (s *session) EndSend() messages.SendRead {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.send.collecting = false
	r := s.endOutput()
	index, before := s.screen.CursorLine()
	s.send.ended.ok, s.send.ended.line, s.send.ended.before = true, s.screen.FinalLines()+int64(index), before
	return r
}

func (s *session) TakeOutput() messages.SendRead {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.takeOutput()
}

func (s *session) PromptReady() (int, bool) {
	s.mu.Lock()
	ok, code := s.prompt.complete(), s.prompt.code
	s.mu.Unlock()
	if !ok || !s.shellForeground() {
		return 0, false
	}
	return code, true
}
