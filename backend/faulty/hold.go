package faulty

// Hold keeps the next call of op (by any session, or Spawn) in flight: the
// call is counted as started, so Entered and Calls see it, then waits until
// release is closed, and then proceeds as it would have, its scripted fault
// (if any) included. Holds queue per operation, one per call, like faults.
//
// Hold is not a fault: the call's outcome is unchanged, only its return is
// late. It is how a test acts while a call is in flight for operations that
// cannot Hang (OpSignal), or shows what the runtime does meanwhile. A held
// call watches neither its context nor the session's close: the test owns
// release and must close it, on failure too (defer), or the call never
// returns. Holding a call the runtime makes on an actor's goroutine
// (OpTryWrite, OpProbe, OpTakeOutput) holds that actor too, as a slow call
// there would.
func (b *Backend) Hold(op Op, release <-chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.holds == nil {
		b.holds = map[Op][]<-chan struct{}{}
	}
	b.holds[op] = append(b.holds[op], release)
}
