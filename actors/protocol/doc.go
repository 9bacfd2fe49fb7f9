// Package protocol is the messages the service, owner and session actors
// exchange: each request with its reply, the lifecycle events published on
// the actor system's event stream, and the route table that says where a
// request goes and how it is refused. The facade in package actors
// (Service, Session, SendOp) is the way to use them; an integration may
// also send them to the service's PID itself. Plain data (requests'
// arguments, results, errors) lives in package messages.
package protocol
