// Package adversarial attacks the web surfaces of a real ptymcp from
// outside, as one on the same machine or network would: the console's
// login and cookie, its pages and API, the live view's WebSocket, share
// links, secret pages, the MCP endpoint's HTTP bounds, and the records on
// disk. Every case starts the ptymcp binary with -http and its console
// (fixture_test.go), drives it through real HTTP and WebSocket clients,
// and asserts what must hold; docs/security.md lists each surface's
// guarantees and the case that checks it. The package has no code of its
// own: only this doc and its tests.
package adversarial
