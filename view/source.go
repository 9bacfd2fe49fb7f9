package view

import (
	"context"

	"github.com/ptyactor/ptyactor/actors"
	"github.com/ptyactor/ptyactor/messages"
)

// ServiceSource shows every session of a Service, of every owner: what a
// server's operator may see (ptymcp's console). Sessions on hosts are
// sessions of the Service too, and are shown the same way.
func ServiceSource(svc *actors.Service) Source { return serviceSource{svc} }

type serviceSource struct{ svc *actors.Service }

func (s serviceSource) Sessions(ctx context.Context) ([]Entry, error) {
	owners, err := s.svc.Owners(ctx)
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, o := range owners {
		snaps, err := s.svc.List(ctx, o)
		if err != nil {
			continue // the owner went away meanwhile
		}
		for _, snap := range snaps {
			out = append(out, s.entry(ctx, o, snap))
		}
	}
	return out, nil
}

// entry describes one session now; a session that closed meanwhile keeps
// what the list said.
func (s serviceSource) entry(ctx context.Context, o messages.Owner, snap messages.Snapshot) Entry {
	if d, err := s.svc.Session(o, snap.SessionID).Describe(ctx); err == nil {
		snap = d
	}
	e := Entry{ID: snap.SessionID, Name: snap.Name, Owner: o, Control: snap.Control}
	if snap.Activity != nil {
		e.Activity = *snap.Activity
	} else if snap.Status.Exited {
		e.Activity = messages.Activity{Badge: messages.BadgeExited, ExitCode: snap.Status.ExitCode}
	} else {
		e.Activity = messages.Activity{Badge: messages.BadgeRunning}
	}
	return e
}

// find returns the owner of session id.
func (s serviceSource) find(ctx context.Context, id messages.SessionID) (messages.Owner, messages.Snapshot, error) {
	owners, err := s.svc.Owners(ctx)
	if err != nil {
		return messages.Owner{}, messages.Snapshot{}, err
	}
	for _, o := range owners {
		snaps, err := s.svc.List(ctx, o)
		if err != nil {
			continue
		}
		for _, snap := range snaps {
			if snap.SessionID == id {
				return o, snap, nil
			}
		}
	}
	return messages.Owner{}, messages.Snapshot{}, messages.ErrNoSession
}

func (s serviceSource) Describe(ctx context.Context, id messages.SessionID) (Entry, error) {
	o, snap, err := s.find(ctx, id)
	if err != nil {
		return Entry{}, err
	}
	return s.entry(ctx, o, snap), nil
}

func (s serviceSource) TakeControl(ctx context.Context, id messages.SessionID, req messages.TakeControlRequest) (Controller, error) {
	o, _, err := s.find(ctx, id)
	if err != nil {
		return nil, err
	}
	c, err := s.svc.Session(o, id).TakeControl(ctx, req)
	if err != nil {
		return nil, err // not a nil *actors.Control in a non-nil interface
	}
	return c, nil
}

func (s serviceSource) Watch(ctx context.Context, id messages.SessionID, since uint64) (Watcher, error) {
	o, _, err := s.find(ctx, id)
	if err != nil {
		return nil, err
	}
	w, err := s.svc.Session(o, id).Watch(ctx, since)
	if err != nil {
		return nil, err
	}
	return w.Live(), nil
}

func (s serviceSource) EnterSecret(ctx context.Context, id messages.SessionID, p messages.SecretPrompt, secret []byte) error {
	o, _, err := s.find(ctx, id)
	if err != nil {
		return err
	}
	return s.svc.Session(o, id).EnterSecret(ctx, p, secret)
}
