// Package wire is the protocol between a ptyactor client and a ptyhost:
// the protobuf messages of wire.proto (generated into wire.pb.go), their
// conversion to and from package messages, typed errors that keep
// errors.Is working across the wire, and the chunking that bounds every
// message on the wire to MaxChunk bytes of payload.
package wire
