// Package view lets people watch terminals live in a browser: a console
// page lists the sessions its holder may see, with a badge from the
// kernel (running, waiting for input, secret prompt, exited, host lost),
// and a live view draws one session with xterm.js, fed over a WebSocket
// with the session's numbered events: first a picture of what the
// terminal shows, then output and resizes as they happen. A viewer that
// reconnects resumes after the last event it drew.
//
// Server is an http.Handler to mount in any server. Who may see what: an
// operator logs in with a token that never reaches the model (exchanged
// for an HttpOnly, SameSite=Strict cookie; a bearer token works too), and
// a share link (Links) shows one session, read-only, to whoever holds its
// token. Every request's Origin is checked, and the WebSocket's. Viewers
// never write to a terminal and never resize it, but for an operator who
// takes a session's input over (Source.TakeControl) until they hand it
// back or their idle timeout (Options.ControlIdle) runs out; and the
// secret page, where a person types the secret a program waits for at a
// secret prompt (Secrets: one-shot links, bound to that prompt's wait),
// straight into the terminal and never through the model.
package view
