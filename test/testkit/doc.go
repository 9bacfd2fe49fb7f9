// Package testkit is the one home of ptyactor's test fixtures, as
// hashicorp/go-plugin keeps its testing.go: each fixture takes the test,
// registers its own cleanup with t.Cleanup and fails the test with
// t.Fatal, so a test asks for what it runs against in one line. One file
// a fixture:
//
//   - ctx.go: Ctx (a per-call watchdog context) and WaitFor (a bounded
//     poll for a condition);
//   - config.go: the runtime configurations tests run with (Config for
//     scripted backends, PTYConfig for real PTYs);
//   - service.go: a running actors.Service (Service, Owner), shut down
//     when the test ends; control.go: ControlWrites, who wrote each input
//     of a session's stream;
//   - host.go: a running ptyhost (StartHost, Host), stopped when the test
//     ends, and the flags of a test host (Loopback, ConfigFlags);
//   - browser.go: a headless chromium over the DevTools protocol
//     (NewBrowser), whose cleanup proves no chromium process outlived the
//     test; without chromium the test skips, unless CI is set;
//   - leakcheck.go: Main, a TestMain body that fails the test binary if a
//     process it started or a goroutine outlived the tests (LeakChecker);
//   - tmuxpane*.go: TmuxPane, when a tmux pane's program waits for input,
//     for the tests that hold the emulator to tmux;
//   - clock.go: OffsetClock, the system clock moved forward by hand;
//   - tls.go: SelfSignedCert, a loopback certificate for a TLS server;
//   - node.go: NodeScript, node and a script of one of test/'s npm
//     packages (skipped without them, unless CI is set).
//
// It imports actors, so the internal tests of actors are in package
// actors_test (actors/export_test.go lets them reach what they need
// inside). No non-test file may import it.
package testkit
