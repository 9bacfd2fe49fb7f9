package remote

import (
	"context"
	"fmt"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/extensions"
	"github.com/ptyactor/ptyactor/actors"
	"github.com/ptyactor/ptyactor/actors/internal/actorkit"
	"github.com/ptyactor/ptyactor/actors/internal/seam"
	"github.com/ptyactor/ptyactor/messages"
)

// Client is a service's remote client: the hosts it registered
// (RegisterHost, Hosts) and its owners' sessions that outlive it on them
// (ResumeToken, DetachOwner, ResumeOwner, ResumeInto). Attach makes one;
// spawns then name a host with SpawnRequest.Host.
type Client struct {
	svc   *actors.Service
	core  seam.Core[*actors.Session, *actors.SendOp]
	sys   *actor.ActorSystem
	hosts *remoteHosts
}

var extensionID = extensions.NextExtensionID()

// ExtensionID registers the Client on its service's actor system, as
// protoactor's remote does.
func (c *Client) ExtensionID() extensions.ExtensionID { return extensionID }

// Attach makes svc a remote client: spawns naming a host
// (SpawnRequest.Host) go to the hosts registered on the returned Client,
// and svc's DisposeOwner and Shutdown reach them. A service has at most
// one Client: a second Attach is an error; Get finds the first.
func Attach(svc *actors.Service) (*Client, error) {
	sys := svc.System()
	core, ok := seam.CoreOf[*actors.Session, *actors.SendOp](sys)
	if !ok {
		return nil, fmt.Errorf("ptyactor: attach remote: %w", messages.InvalidArgument("not a service's actor system"))
	}
	c := &Client{svc: svc, core: core, sys: sys, hosts: newRemoteHosts(sys)}
	if err := core.SetRoom(c.hosts); err != nil {
		return nil, fmt.Errorf("ptyactor: attach remote: %w", err)
	}
	sys.Extensions.Register(c)
	return c, nil
}

// Get returns the Client attached to svc, or nil.
func Get(svc *actors.Service) *Client {
	c, _ := svc.System().Extensions.Get(extensionID).(*Client)
	return c
}

// ask sends msg to pid and waits for one reply of type R.
func ask[R any](ctx context.Context, sys *actor.ActorSystem, pid *actor.PID, msg any) (R, error) {
	return actorkit.Ask[R](ctx, sys, pid, msg)
}
