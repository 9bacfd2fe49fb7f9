package wire

// GatewayID is the id of the host's gateway actor: the only actor a
// client's messages may reach on a host.
const GatewayID = "ptyhost-gateway"

// LinkPrefix begins the id of every client-side host link actor: the only
// actors a host's messages may reach on a client.
const LinkPrefix = "ptyactor-host-link-"

// Type names as the wire carries them (protobuf full names; a test checks
// them against the generated descriptors).
const (
	RequestType = "ptyactor.wire.v1.Request"
	ReplyType   = "ptyactor.wire.v1.Reply"
	ChunkType   = "ptyactor.wire.v1.Chunk"
)
