// Package remote is the client side of ptyactor's remote hosts: Attach
// makes a Service a client of ptyhosts (cmd/ptyhost), whose sessions its
// owners then spawn, send to and close as local ones, through a proxy
// session actor under each owner.
//
// It sits beside package actors as protoactor's remote sits beside actor:
// the core knows nothing of it; Attach installs it as the service's room
// (the placement of spawns that name a host, SpawnRequest.Host) and as an
// extension of the service's actor system (Get finds it). Its API is the
// Client: RegisterHost and Hosts, and the sessions that outlive a lost or
// detached client on a host for its grace (ResumeToken, DetachOwner,
// ResumeOwner, ResumeInto).
//
// Beside it: wire (the protocol, its conversions and route), host (the
// host's gateway) and internal/endpoint (the protoactor remote endpoint
// both sides run, with its admission check).
package remote
