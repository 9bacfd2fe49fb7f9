package actors

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/ptyactor/ptyactor/internal/textcut"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/rs/zerolog"
)

// tasksActor is the registry of background sends. A task is a reserved
// send whose output is collected in pieces: each TaskOutput returns only
// what arrived since the previous one. Tasks belong to their owner exactly
// like sessions: another owner's id is answered like an unknown id, and
// disposing the owner drops its tasks (their sends settled when the
// owner's sessions closed).
//
// Finished tasks are bounded (messages.MaxFinishedTasksPerOwner,
// messages.FinishedTaskTTL): a sweep before every message evicts the
// owner's oldest finished tasks beyond the count and every finished task
// not read for the TTL, by the injected clock. Evicted ids are remembered
// (bounded) so a read answers messages.ErrTaskEvicted, not ErrNoTask.
// Output handed out is dropped at once, and a finished task lets go of
// its send (whose result holds the viewport).
//
// Everything that blocks (reserving the send, reading its output,
// cancelling it, waiting for it to settle) runs in goroutines the actor
// starts, which report back as messages; the mailbox never blocks. The
// goroutines end when their work does or when the actor stops.
type tasksActor struct {
	svc   *Service
	clock Clock
	log   zerolog.Logger

	ctx    context.Context // ends when the actor stops
	cancel context.CancelFunc
	wg     *sync.WaitGroup // the actor's goroutines; Service.Shutdown joins them

	tasks map[messages.TaskID]*taskRec

	evicted      map[messages.TaskID]messages.Owner // evicted ids, to answer ErrTaskEvicted
	evictedOrder []messages.TaskID                  // oldest first, at most MaxEvictedTaskIDs
}

type taskRec struct {
	owner messages.Owner
	snap  messages.TaskSnapshot
	limit int
	op    *SendOp // nil until the reservation reply, and again once finished

	reserved bool      // the reservation reply came: the id was handed out
	lastRead time.Time // finish time, then the last read after it (TTL base)

	// Output collected since the last TaskOutput (tail kept within limit).
	buf       []byte
	truncated bool

	reading   bool         // a ReadOutput is in flight
	takers    []*actor.PID // TaskOutput callers waiting for that read
	settleDue bool         // the send settled while a read was in flight

	killRequested bool
	finished      chan struct{} // closed once the settlement is applied
}

func newTasksActor(svc *Service, clock Clock, log zerolog.Logger) *tasksActor {
	ctx, cancel := context.WithCancel(context.Background())
	return &tasksActor{
		svc: svc, clock: clock, log: log, ctx: ctx, cancel: cancel, wg: &sync.WaitGroup{},
		tasks: map[messages.TaskID]*taskRec{}, evicted: map[messages.TaskID]messages.Owner{},
	}
}

// Messages between the facade and the tasks actor, and from the actor's
// goroutines back to it.
type (
	taskStart struct {
		owner messages.Owner
		req   messages.TaskRequest
	}
	taskStartReply struct {
		id  messages.TaskID
		err error
	}
	taskReserved struct {
		id      messages.TaskID
		op      *SendOp
		err     error
		replyTo *actor.PID
	}
	taskSettled struct{ id messages.TaskID }
	// taskLookup answers the channel closed when the task finished, so the
	// facade can wait without the actor blocking.
	taskLookup struct {
		owner messages.Owner
		id    messages.TaskID
	}
	taskLookupReply struct {
		finished <-chan struct{}
		snap     messages.TaskSnapshot
		err      error
	}
	taskTake struct {
		owner messages.Owner
		id    messages.TaskID
	}
	taskTakeReply struct {
		out messages.TaskOutput
		err error
	}
	taskReadDone struct {
		id   messages.TaskID
		read messages.SendRead
		err  error
	}
	taskKill struct {
		owner messages.Owner
		id    messages.TaskID
	}
	taskKillReply struct {
		outcome messages.TaskKillOutcome
		snap    messages.TaskSnapshot
		err     error
	}
	taskCancelDone struct {
		id       messages.TaskID
		accepted bool
		replyTo  *actor.PID
	}
	tasksOwnerGone      struct{ owner messages.Owner }
	tasksOwnerGoneReply struct{}
	// tasksProbe asks the registry's footprint (tests).
	tasksProbe      struct{}
	tasksProbeReply struct{ tasks, finished, bufferedBytes, sends, evicted int }
)

func (a *tasksActor) Receive(ctx actor.Context) {
	if _, system := ctx.Message().(actor.SystemMessage); !system {
		a.sweep()
	}
	switch m := ctx.Message().(type) {
	case *taskStart:
		a.onStart(ctx, m)
	case *taskReserved:
		a.onReserved(ctx, m)
	case *taskSettled:
		if rec := a.tasks[m.id]; rec != nil {
			a.pump(rec)
		}
	case *taskLookup:
		a.onLookup(ctx, m)
	case *taskTake:
		a.onTake(ctx, m)
	case *taskReadDone:
		a.onReadDone(ctx, m)
	case *taskKill:
		a.onKill(ctx, m)
	case *taskCancelDone:
		a.onCancelDone(ctx, m)
	case *tasksOwnerGone:
		a.onOwnerGone(ctx, m)
	case *tasksProbe:
		ctx.Respond(a.probe())
	case *injectPanic:
		panic("injected fault: tasks")
	case *actor.Stopping:
		// Goroutines waiting on a send or an ask return now.
		a.cancel()
	}
}

// onLookup answers a task's state without taking its output.
func (a *tasksActor) onLookup(ctx actor.Context, m *taskLookup) {
	rec, err := a.lookup(m.owner, m.id)
	if err != nil {
		ctx.Respond(&taskLookupReply{err: err})
		return
	}
	ctx.Respond(&taskLookupReply{finished: rec.finished, snap: rec.snap})
}

// onOwnerGone forgets an owner's tasks and their tombstones; a taker still
// waiting on one is told it is gone.
func (a *tasksActor) onOwnerGone(ctx actor.Context, m *tasksOwnerGone) {
	for id, rec := range a.tasks {
		if rec.owner == m.owner {
			for _, p := range rec.takers {
				ctx.Send(p, &taskTakeReply{err: messages.NoTask(id)})
			}
			delete(a.tasks, id)
		}
	}
	for id, owner := range a.evicted {
		if owner == m.owner {
			delete(a.evicted, id)
		}
	}
	ctx.Respond(&tasksOwnerGoneReply{})
}

// probe counts what the actor holds, for the tests that check its bounds.
func (a *tasksActor) probe() *tasksProbeReply {
	r := &tasksProbeReply{tasks: len(a.tasks), evicted: len(a.evicted)}
	for _, rec := range a.tasks {
		r.bufferedBytes += cap(rec.buf)
		if rec.snap.Status.Finished() {
			r.finished++
		}
		if rec.op != nil {
			r.sends++
		}
	}
	return r
}

// goRun starts work off the mailbox; its result comes back as a message.
func (a *tasksActor) goRun(f func()) {
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		f()
	}()
}

func (a *tasksActor) tell(self *actor.PID, m any) { a.svc.sys.Root.Send(self, m) }

func (a *tasksActor) lookup(owner messages.Owner, id messages.TaskID) (*taskRec, error) {
	rec := a.tasks[id]
	if rec == nil {
		if o, ok := a.evicted[id]; ok && o == owner {
			return nil, messages.TaskEvicted(id)
		}
	}
	if rec == nil || rec.owner != owner || !rec.reserved {
		return nil, messages.NoTask(id)
	}
	return rec, nil
}

// sweep evicts finished tasks: those not read for FinishedTaskTTL, then
// each owner's oldest beyond MaxFinishedTasksPerOwner.
func (a *tasksActor) sweep() {
	now := a.clock.Now()
	var byOwner map[messages.Owner][]*taskRec
	for id, rec := range a.tasks {
		if !rec.snap.Status.Finished() {
			continue
		}
		if now.Sub(rec.lastRead) >= messages.FinishedTaskTTL {
			a.evict(id, rec)
			continue
		}
		if byOwner == nil {
			byOwner = map[messages.Owner][]*taskRec{}
		}
		byOwner[rec.owner] = append(byOwner[rec.owner], rec)
	}
	for _, recs := range byOwner {
		if len(recs) <= messages.MaxFinishedTasksPerOwner {
			continue
		}
		slices.SortFunc(recs, func(x, y *taskRec) int { return x.snap.FinishedAt.Compare(y.snap.FinishedAt) })
		for _, rec := range recs[:len(recs)-messages.MaxFinishedTasksPerOwner] {
			a.evict(rec.snap.ID, rec)
		}
	}
}

// evict drops a finished task and remembers its id for its owner.
func (a *tasksActor) evict(id messages.TaskID, rec *taskRec) {
	delete(a.tasks, id)
	a.evicted[id] = rec.owner
	a.evictedOrder = append(a.evictedOrder, id)
	if over := len(a.evictedOrder) - messages.MaxEvictedTaskIDs; over > 0 {
		for _, old := range a.evictedOrder[:over] {
			delete(a.evicted, old)
		}
		a.evictedOrder = slices.Delete(a.evictedOrder, 0, over)
	}
}

func (a *tasksActor) onStart(ctx actor.Context, m *taskStart) {
	id := newTaskID()
	limit := m.req.OutputLimitBytes
	if limit <= 0 {
		limit = a.svc.cfg.MaxReadBytes
	}
	a.tasks[id] = &taskRec{
		owner: m.owner, limit: limit, finished: make(chan struct{}),
		snap: messages.TaskSnapshot{
			ID: id, Kind: messages.TaskKindSend, Label: m.req.Label, Session: m.req.Session,
			Status: messages.TaskRunning, StartedAt: a.clock.Now(),
		},
	}
	self, replyTo := ctx.Self(), ctx.Sender()
	a.goRun(func() {
		// The send is reserved before the id is handed out: a task id
		// always names a send that owns its session's slot.
		op, err := a.svc.Session(m.owner, m.req.Session).StartSend(a.ctx, m.req.Send)
		a.tell(self, &taskReserved{id: id, op: op, err: err, replyTo: replyTo})
		if err != nil {
			return
		}
		select {
		case <-op.Done():
			a.tell(self, &taskSettled{id: id})
		case <-a.ctx.Done():
		}
	})
}

func (a *tasksActor) onReserved(ctx actor.Context, m *taskReserved) {
	rec := a.tasks[m.id]
	switch {
	case m.err != nil:
		delete(a.tasks, m.id)
		ctx.Send(m.replyTo, &taskStartReply{err: m.err})
	case rec == nil:
		// The owner was disposed while the reservation was on its way; its
		// sessions are closed, so the send settles on its own.
		ctx.Send(m.replyTo, &taskStartReply{err: messages.Errorf(messages.CodeOwnerNotLive, "PTY owner is not live")})
	default:
		rec.op, rec.reserved = m.op, true
		ctx.Send(m.replyTo, &taskStartReply{id: m.id})
	}
}

// pump applies the settlement once the send is done and no read is in
// flight (a read in flight may still carry output that precedes the
// viewport).
func (a *tasksActor) pump(rec *taskRec) {
	if rec.op == nil || rec.snap.Status.Finished() {
		return
	}
	select {
	case <-rec.op.Done():
	default:
		return
	}
	if rec.reading {
		rec.settleDue = true
		return
	}
	rec.settleDue = false
	res, err := rec.op.Result(context.Background()) // settled: returns at once
	rec.snap.FinishedAt = a.clock.Now()
	rec.lastRead = rec.snap.FinishedAt
	switch {
	case err != nil && !(rec.killRequested && errors.Is(err, messages.ErrAbortedBeforeWrite)):
		rec.snap.Status = messages.TaskFailed
		rec.snap.Detail = err.Error()
	default:
		if err == nil {
			a.appendOutput(rec, res.Viewport, res.Truncated)
			st := res.Status
			rec.snap.WaitReason, rec.snap.ExitCode, rec.snap.Reader, rec.snap.SessionStatus = res.WaitReason, res.ExitCode, res.Reader, &st
			rec.snap.Detail = settleDetail(res)
		} else {
			rec.snap.Detail = "input was never written"
		}
		rec.snap.Status = messages.TaskCompleted
		if rec.killRequested {
			rec.snap.Status = messages.TaskKilled
		}
	}
	rec.op = nil // its result (the viewport) is copied out; let it go
	close(rec.finished)
}

// settleDetail is "wait: <reason>[, exit code <n>][, taken over: ...]" or
// "session exited: <code|signal|unknown>".
func settleDetail(res messages.SendResult) string {
	if res.WaitReason == messages.WaitSessionExit {
		switch {
		case res.Status.ExitCode != nil:
			return "session exited: " + strconv.Itoa(*res.Status.ExitCode)
		case res.Status.Signal != "":
			return "session exited: " + res.Status.Signal
		}
		return "session exited: unknown"
	}
	d := "wait: " + string(res.WaitReason)
	if res.ExitCode != nil {
		d += ", exit code " + strconv.Itoa(*res.ExitCode)
	}
	if res.Cause == messages.CauseTakenOver {
		d += ", taken over: a person took the terminal's input"
	}
	return d
}

// appendOutput keeps the newest limit bytes, cut on a UTF-8 boundary.
func (a *tasksActor) appendOutput(rec *taskRec, s string, truncated bool) {
	rec.truncated = rec.truncated || truncated
	rec.buf = append(rec.buf, s...)
	if over := textcut.Tail(rec.buf, rec.limit); over > 0 {
		rec.buf = append(rec.buf[:0], rec.buf[over:]...)
		rec.truncated = true
	}
}

func (a *tasksActor) onTake(ctx actor.Context, m *taskTake) {
	rec, err := a.lookup(m.owner, m.id)
	if err != nil {
		ctx.Respond(&taskTakeReply{err: err})
		return
	}
	a.pump(rec)
	rec.takers = append(rec.takers, ctx.Sender())
	if rec.reading {
		return
	}
	if rec.snap.Status.Finished() {
		a.answerTakers(ctx, rec)
		return
	}
	rec.reading = true
	op, self, id := rec.op, ctx.Self(), m.id
	a.goRun(func() {
		r, err := op.ReadOutput(a.ctx)
		a.tell(self, &taskReadDone{id: id, read: r, err: err})
	})
}

func (a *tasksActor) onReadDone(ctx actor.Context, m *taskReadDone) {
	rec := a.tasks[m.id]
	if rec == nil {
		return // the owner was disposed; its takers were answered then
	}
	rec.reading = false
	if m.err == nil {
		a.appendOutput(rec, m.read.Delta, m.read.Truncated)
	}
	a.pump(rec)
	a.answerTakers(ctx, rec)
}

// answerTakers hands the collected output to the first waiting caller (the
// others, concurrent readers of the same task, get what arrived after it:
// nothing) and frees the buffer: output handed out is not kept.
func (a *tasksActor) answerTakers(ctx actor.Context, rec *taskRec) {
	for i, p := range rec.takers {
		out := messages.TaskOutput{Task: rec.snap}
		if i == 0 {
			out.Text, out.Truncated = string(rec.buf), rec.truncated
			rec.buf, rec.truncated = nil, false
		}
		ctx.Send(p, &taskTakeReply{out: out})
	}
	rec.takers = nil
	if rec.snap.Status.Finished() {
		rec.lastRead = a.clock.Now()
	}
}

func (a *tasksActor) onKill(ctx actor.Context, m *taskKill) {
	rec, err := a.lookup(m.owner, m.id)
	if err != nil {
		ctx.Respond(&taskKillReply{err: err})
		return
	}
	a.pump(rec)
	if rec.snap.Status.Finished() || rec.settleDue {
		ctx.Respond(&taskKillReply{outcome: messages.TaskAlreadyFinished, snap: rec.snap})
		return
	}
	if rec.killRequested {
		ctx.Respond(&taskKillReply{outcome: messages.TaskCancellationRequested, snap: rec.snap})
		return
	}
	rec.killRequested = true
	rec.snap.Status = messages.TaskStopping
	op, self, replyTo, id := rec.op, ctx.Self(), ctx.Sender(), m.id
	a.goRun(func() {
		a.tell(self, &taskCancelDone{id: id, accepted: op.Cancel(), replyTo: replyTo})
	})
}

func (a *tasksActor) onCancelDone(ctx actor.Context, m *taskCancelDone) {
	rec := a.tasks[m.id]
	if rec == nil {
		ctx.Send(m.replyTo, &taskKillReply{err: messages.NoTask(m.id)})
		return
	}
	outcome := messages.TaskCancellationRequested
	if !m.accepted {
		// The send settled before the cancel reached it: it completed on
		// its own.
		outcome = messages.TaskAlreadyFinished
		rec.killRequested = false
		switch rec.snap.Status {
		case messages.TaskKilled:
			rec.snap.Status = messages.TaskCompleted
		case messages.TaskStopping:
			rec.snap.Status = messages.TaskRunning
		}
		a.pump(rec)
	}
	ctx.Send(m.replyTo, &taskKillReply{outcome: outcome, snap: rec.snap})
}

// newTaskID mints an unguessable id: 128 random bits.
func newTaskID() messages.TaskID {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return messages.TaskID("pty-send-" + hex.EncodeToString(b[:]))
}

// StartTask starts a background send: it returns the task id once the send
// holds its session's slot (SEND_ACTIVE and every other refusal of
// StartSend come back here, and no task exists then). The reservation is
// awaited even if ctx ends, so an id is never lost for a send that runs.
func (s *Service) StartTask(ctx context.Context, owner messages.Owner, req messages.TaskRequest) (messages.TaskID, error) {
	if ctx.Err() != nil {
		return "", context.Cause(ctx)
	}
	r, err := ask[*taskStartReply](context.WithoutCancel(ctx), s.sys, s.tasks, &taskStart{owner: owner, req: req})
	if err != nil {
		return "", tasksGone(err)
	}
	return r.id, r.err
}

// TaskOutput returns the output produced since the previous call and the
// task's status. With wait > 0 it first waits until the task finished, wait
// passed, or ctx ended (then it returns context.Cause(ctx)).
func (s *Service) TaskOutput(ctx context.Context, owner messages.Owner, id messages.TaskID, wait time.Duration) (messages.TaskOutput, error) {
	if wait > 0 {
		lr, err := ask[*taskLookupReply](ctx, s.sys, s.tasks, &taskLookup{owner: owner, id: id})
		if err != nil {
			return messages.TaskOutput{}, tasksGone(err)
		}
		if lr.err != nil {
			return messages.TaskOutput{}, lr.err
		}
		t := time.NewTimer(wait)
		select {
		case <-lr.finished:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return messages.TaskOutput{}, context.Cause(ctx)
		}
		t.Stop()
	}
	r, err := ask[*taskTakeReply](ctx, s.sys, s.tasks, &taskTake{owner: owner, id: id})
	if err != nil {
		return messages.TaskOutput{}, tasksGone(err)
	}
	return r.out, r.err
}

// TaskStatus returns a task's status now, without taking its output, and
// a channel closed once it finished (a transport can tell its client then).
func (s *Service) TaskStatus(ctx context.Context, owner messages.Owner, id messages.TaskID) (messages.TaskSnapshot, <-chan struct{}, error) {
	lr, err := ask[*taskLookupReply](ctx, s.sys, s.tasks, &taskLookup{owner: owner, id: id})
	if err != nil {
		return messages.TaskSnapshot{}, nil, tasksGone(err)
	}
	return lr.snap, lr.finished, lr.err
}

// KillTask cancels a running task: input not yet written is never written;
// otherwise a real SIGINT goes to the terminal's foreground group (it works
// when the program disabled ISIG). A finished task is left alone
// (TaskAlreadyFinished).
func (s *Service) KillTask(ctx context.Context, owner messages.Owner, id messages.TaskID) (messages.TaskKillOutcome, messages.TaskSnapshot, error) {
	r, err := ask[*taskKillReply](ctx, s.sys, s.tasks, &taskKill{owner: owner, id: id})
	if err != nil {
		return "", messages.TaskSnapshot{}, tasksGone(err)
	}
	return r.outcome, r.snap, r.err
}

// tasksGone: the registry stopped, which only a shutdown does.
func tasksGone(err error) error {
	if errors.Is(err, errGone) {
		return messages.Errorf(messages.CodeServiceDisposing, "PTY service is disposing")
	}
	return err
}
