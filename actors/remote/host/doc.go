// Package host serves a ptyactor runtime to remote clients: the sessions
// run here, next to their PTYs, and readiness is decided here (markers,
// probes, silence, deadlines); a client sends one request per send and
// gets the settled result back.
//
// # The gateway
//
// A gateway actor is the only actor a client's messages may reach: the
// endpoint (actors/remote/internal/endpoint) admits only the wire types Request
// and Chunk, addressed to the gateway, from a sender on the address the
// client announced, and refuses system messages and every other target
// before protoactor decodes anything. The gateway maps each wire request
// to the runtime's message protocol (package actors/protocol), sent to the
// service with a relay as the sender: a small process that hands the
// runtime's reply back to the gateway with the call it answers. Nothing
// blocks the gateway's mailbox, and no future or timeout stands between a
// reply and its client.
//
// # Authorization
//
// OpenOwner mints an owner on this host and returns its capability token
// (256 random bits) and resume token. Every later request carries the
// token; the gateway keeps only its SHA-256 digest and compares digests in
// constant time. A wrong token is answered exactly like a request for an
// unknown owner or session (Spawn: OWNER_NOT_LIVE; a session request:
// NO_SESSION), so another client's ids are answered like unknown ids, as
// between owners on one machine. Tokens are never logged.
//
// Over mutual TLS an owner is also bound to the TLS identity of the client
// that opened it (the SHA-256 of its certificate's public key, which the
// endpoint stamps on every message it admits): both its tokens, presented
// by a client with another identity, are answered as wrong tokens. An
// insecure host has no identity, and the tokens alone decide.
//
// # Client loss
//
// A client heartbeats. One silent for Config.ClientLoss is lost, and an
// owner its client detached (DetachOwner) is left alone: either way the
// sessions keep running for Config.ClientGrace. ResumeOwner with the
// owner's resume token (its SHA-256 digest is all the gateway keeps), from
// a client with the owner's TLS identity, hands the owner to that client, with a new capability token, its
// sessions as they are now, the client's ids of them, and each one's
// latest send ticket. After the grace the owners are disposed with the
// same teardown as a local close.
package host
