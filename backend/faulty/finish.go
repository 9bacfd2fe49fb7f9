package faulty

// Finish ends the running command with status code, as its exit would:
// the shell prints its prompt and the verified marker carrying code (a
// reader prints its prompt, without a marker). A Responder that leaves a
// command Running, with Emit and Finish, lets a test decide when, and with
// what output and status, the command ends.
func (s *Session) Finish(code int) { s.prompt(code, false) }
