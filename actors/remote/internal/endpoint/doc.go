// Package endpoint starts the protoactor remote endpoint that carries the
// wire protocol between a ptyactor client and a ptyhost, with mutual TLS
// (or, on loopback only, none) and an admission check that runs on every
// message before the library sees it.
//
// The pinned protoactor-go remote trusts its peers: it delivers system
// messages (Stop, Watch) to any local actor by id, lets the sender name any
// reply address, panics on an unknown type name or an out-of-range index,
// and panics in ListProcesses and GetProcessDiagnostics ("implement me").
// The admission check closes all of that: a stream whose message names a
// type, a target or a sender outside what Admit allows is ended with
// PermissionDenied before protoactor decodes it, and the unary calls are
// refused. A panic inside the library's stream handler is recovered.
//
// The library never hands an actor the TLS identity of the connection a
// message came in on; with Admit.StampIdentity the admission check writes
// it (PeerHeader) on every message it admits, in place of the peer's own
// headers, so an actor can bind what it grants to a certificate. An
// endpoint also records the identity of each peer it dialled
// (DialedIdentity), so an actor can tell a reply from the peer it asked
// from one sent with another certificate of the same CA.
package endpoint
