package tools

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ptyactor/ptyactor/messages"
)

func intp(n int) *int { return &n }

// The golden example of REFERENCE §c at cap 64.
func TestRenderSendGoldenCap64(t *testing.T) {
	r := messages.SendResult{Viewport: "a long line of output\nK\ndsh> ", WaitReason: messages.WaitStdinRead, Status: messages.Running}
	got := renderSend(r, 64)
	want := "K\ndsh> \n[wait: stdin_read]\n[session: running]\n[output truncated]"
	if got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	if len(got) != 64 {
		t.Fatalf("len %d, want exactly 64", len(got))
	}
}

func TestRenderGolden(t *testing.T) {
	exited := messages.ExitedWith(3)
	cases := []struct {
		name, got, want string
	}{
		{"send", renderSend(messages.SendResult{Viewport: "hi\n$ ", WaitReason: messages.WaitStdinRead, ExitCode: intp(0), Status: messages.Running}, 1000),
			"hi\n$ \n[wait: stdin_read]\n[exit code: 0]\n[session: running]"},
		{"send reader", renderSend(messages.SendResult{Viewport: ">>> ", WaitReason: messages.WaitStdinRead, Reader: "python3", Status: messages.Running}, 1000),
			">>> \n[wait: stdin_read]\n[reader: python3]\n[session: running]"},
		{"send empty exited", renderSend(messages.SendResult{WaitReason: messages.WaitSessionExit, Status: exited}, 1000),
			"(no new output)\n[wait: session_exit]\n[session: exited code=3 signal=null]"},
		{"send cancelled", renderSend(messages.SendResult{Viewport: "^C\n$ ", WaitReason: messages.WaitStdinRead, Cause: messages.CauseCancelled, ExitCode: intp(130), Status: messages.Running}, 1000),
			"^C\n$ \n[wait: stdin_read]\n[cause: cancelled]\n[exit code: 130]\n[session: running]"},
		{"send prompt cause implied", renderSend(messages.SendResult{Viewport: "$ ", WaitReason: messages.WaitStdinRead, Cause: messages.CausePrompt, ExitCode: intp(0), Status: messages.Running}, 1000),
			"$ \n[wait: stdin_read]\n[exit code: 0]\n[session: running]"},
		{"send left running", renderSend(messages.SendResult{Viewport: "$ ", WaitReason: messages.WaitStdinRead, Cause: messages.CausePrompt, ExitCode: intp(0), Status: messages.Running,
			Running: []messages.Process{{PID: 7, Command: "npm"}, {PID: 9, Command: "sleep", Detached: true}}}, 1000),
			"$ \n[wait: stdin_read]\n[exit code: 0]\n[session: running]\n[left running: pid 7 npm, pid 9 sleep (detached)]"},
		{"send full-screen", renderSend(messages.SendResult{Viewport: "\x00redraw", WaitReason: messages.WaitStdinRead, Cause: messages.CauseInput, Reader: "vim", Status: messages.Running,
			Screen: &messages.Screen{Rows: []string{"hello", "~", "", ""}, CursorRow: 0, CursorCol: 4, Height: 4, Width: 10, AltScreen: true}}, 1000),
			"┌── full-screen program 4x10, cursor at row 1 col 5 ──\n│hello\n│~\n└──\n[wait: stdin_read]\n[reader: vim]\n[session: running]"},
		{"send unwritten", renderSend(messages.SendResult{Viewport: "zzz", WaitReason: messages.WaitTimeout, Status: messages.Running, Unwritten: 2, FirstUnwritten: "echo next"}, 1000),
			"zzz\n[wait: timeout]\n[session: running]\n[not written: 2 line(s), from \"echo next\"]"},
		{"send truncated", renderSend(messages.SendResult{Viewport: "x", WaitReason: messages.WaitTimeout, Status: messages.Running, Truncated: true}, 1000),
			"x\n[wait: timeout]\n[session: running]\n[output truncated]"},
		{"open", renderOpen(messages.SpawnResult{Snapshot: messages.Snapshot{SessionID: "pty-1", Name: "dev", Type: "shell"}, Motd: "$ "}, 1000),
			"started terminal session pty-1 (dev) [type: shell]\n$ "},
		{"open no motd", renderOpen(messages.SpawnResult{Snapshot: messages.Snapshot{SessionID: "pty-1", Type: "shell"}}, 1000),
			"started terminal session pty-1 [type: shell]\n(no startup output)"},
		{"open over cap", renderOpen(messages.SpawnResult{Snapshot: messages.Snapshot{SessionID: "pty-1", Type: "shell"}, Motd: strings.Repeat("m", 50) + "END"}, 70),
			"started terminal session pty-1 [type: shell]\nmmmEND\n[output truncated]"}, // exactly 70 bytes
		{"read", renderRead(messages.ReadResult{Text: "a\nb", TotalLines: 10, LineBegin: 2, LineEnd: 4}, 1000), "a\nb\n[lines: 2-4 of 10]"},
		{"read empty", renderRead(messages.ReadResult{LineBegin: 5, LineEnd: 5, TotalLines: 3}, 1000), "(no retained output)\n[lines: 5-5 of 3]"},
		{"read truncated", renderRead(messages.ReadResult{Text: "a", TotalLines: 1, LineEnd: 1, Truncated: true}, 1000), "a\n[lines: 0-1 of 1]\n[output truncated]"},
		{"list empty", renderList(nil, 1000), "(no terminal sessions)"},
		{"list", renderList([]messages.Snapshot{{SessionID: "pty-1", Name: "a", Type: "shell", PID: 42}, {SessionID: "pty-2", Type: "shell", Status: exited}}, 1000),
			"pty-1 (a) [shell] running pid=42\npty-2 [shell] exited code=3 signal=null"},
		{"signal", renderSignal(messages.SIGINT, messages.SignalResult{Delivered: true, TargetPgid: 77}, 1000), "delivered SIGINT to foreground process group 77"},
		{"signal dropped", renderSignal(messages.SIGTERM, messages.SignalResult{TargetPgid: 77, Reason: "sleep (pid 77) runs in the shell's process, pid 1 of the sandbox's pid namespace, and has no handler for SIGTERM: the kernel drops the signal."}, 1000),
			"SIGTERM not delivered to foreground process group 77: sleep (pid 77) runs in the shell's process, pid 1 of the sandbox's pid namespace, and has no handler for SIGTERM: the kernel drops the signal."},
		{"signal dropped no reason", renderSignal(messages.SIGHUP, messages.SignalResult{TargetPgid: 77}, 1000),
			"SIGHUP not delivered to foreground process group 77: the runtime gave no reason"},
		{"signal dropped over cap", renderSignal(messages.SIGTERM, messages.SignalResult{TargetPgid: 77, Reason: strings.Repeat("r", 100)}, 100),
			"SIGTERM not delivered to foreground process group 77: " + strings.Repeat("r", 100-19-54) + "\n[output truncated]"},
		{"close", renderClose("pty-1", true, nil, 1000), "closed terminal session pty-1"},
		{"close joined", renderClose("pty-1", false, nil, 1000), "terminal session pty-1 was already closing"},
		{"close recorded", renderClose("pty-1", true, &RecordingValue{Path: "/r/s.rec", Host: "box", Records: 42, SHA256: "ab12"}, 1000),
			"closed terminal session pty-1\n[recording: /r/s.rec on box, 42 records, chain sha256 ab12; play it: ptyrec play /r/s.rec]"},
		{"close fetched", renderClose("pty-1", true, &RecordingValue{Path: "/l/s.rec", Host: "h1", HostPath: "/h/s.rec", Records: 3, SHA256: "cd"}, 1000),
			"closed terminal session pty-1\n[recording: /l/s.rec (copied from /h/s.rec on h1), 3 records, chain sha256 cd; play it: ptyrec play /l/s.rec]"},
		{"close not fetched", renderClose("pty-1", true, &RecordingValue{Path: "/h/s.rec", Host: "h1", HostPath: "/h/s.rec", FetchError: "host lost", Records: 3, SHA256: "cd"}, 1000),
			"closed terminal session pty-1\n[recording: /h/s.rec on h1 (not copied here: host lost), 3 records, chain sha256 cd; play it: ptyrec play /h/s.rec]"},
		{"ack", renderAck("pty-send-1", 1000), "started background task pty-send-1"},
		{"task running", renderTaskOutput(messages.TaskOutput{Text: "tick\n", Task: messages.TaskSnapshot{Status: messages.TaskRunning}}, 1000), "tick\n\n[status: running]"},
		{"task no output", renderTaskOutput(messages.TaskOutput{Task: messages.TaskSnapshot{Status: messages.TaskCompleted, Detail: "wait: stdin_read, exit code 0"}}, 1000),
			"(no new output)\n[status: completed, wait: stdin_read, exit code 0]"},
		{"task delta truncated", renderTaskOutput(messages.TaskOutput{Text: "abc", Truncated: true, Task: messages.TaskSnapshot{Status: messages.TaskRunning}}, 1000),
			"abc\n[output truncated]\n[status: running]"},
		{"task delta truncated nl", renderTaskOutput(messages.TaskOutput{Text: "abc\n", Truncated: true, Task: messages.TaskSnapshot{Status: messages.TaskRunning}}, 1000),
			"abc\n[output truncated]\n[status: running]"},
		{"task over cap", renderTaskOutput(messages.TaskOutput{Text: strings.Repeat("x", 100) + "TAIL", Task: messages.TaskSnapshot{Status: messages.TaskRunning}}, 64),
			strings.Repeat("x", 64-19-18-4) + "TAIL\n[output truncated]\n[status: running]"},
		// A truncated delta over the cap carries the marker once.
		{"task over cap truncated", renderTaskOutput(messages.TaskOutput{Text: strings.Repeat("x", 100) + "TAIL", Truncated: true, Task: messages.TaskSnapshot{Status: messages.TaskRunning}}, 64),
			strings.Repeat("x", 64-19-18-4) + "TAIL\n[output truncated]\n[status: running]"},
		{"kill", renderKill("t1", messages.TaskCancellationRequested, messages.TaskSnapshot{}, 1000), "requested cancellation of task t1"},
		{"kill finished", renderKill("t1", messages.TaskAlreadyFinished, messages.TaskSnapshot{Status: messages.TaskCompleted, Detail: "wait: stdin_read"}, 1000),
			"task t1 had already finished [status: completed, wait: stdin_read]"},
		{"error", renderError(messages.NoSession("pty-9"), 1000), "Error: unknown PTY session pty-9"},
		{"error cap 64", renderError(messages.NoSession(messages.SessionID(strings.Repeat("z", 100))), 64),
			"Error: unknown PTY session " + strings.Repeat("z", 64-19-27) + "\n[output truncated]"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, c.got, c.want)
		}
	}
}

// Cuts land on code point boundaries and never exceed the cap, for every
// cap from the minimum up, with multi-byte text everywhere.
func TestRenderUTF8AndCap(t *testing.T) {
	body := strings.Repeat("é€😀x\n", 40)
	for limit := MinMaxResultBytes; limit < 300; limit++ {
		outs := []string{
			renderSend(messages.SendResult{Viewport: body, WaitReason: messages.WaitStdinRead, ExitCode: intp(1), Reader: "python3", Status: messages.Running, Truncated: true}, limit),
			renderRead(messages.ReadResult{Text: body, TotalLines: 9999, LineBegin: 1000, LineEnd: 2000}, limit),
			renderOpen(messages.SpawnResult{Snapshot: messages.Snapshot{SessionID: "pty-é", Type: "shell"}, Motd: body}, limit),
			renderTaskOutput(messages.TaskOutput{Text: body, Truncated: true, Task: messages.TaskSnapshot{Status: messages.TaskFailed, Detail: strings.Repeat("é", 30)}}, limit),
			renderError(messages.InvalidArgument("%s", body), limit),
			finalize(body, limit),
		}
		for i, s := range outs {
			if len(s) > limit {
				t.Fatalf("limit %d, render %d: %d bytes", limit, i, len(s))
			}
			if !utf8.ValidString(s) {
				t.Fatalf("limit %d, render %d: invalid UTF-8 %q", limit, i, s)
			}
			if strings.Count(s, "[output truncated]") != 1 {
				t.Fatalf("limit %d, render %d: marker count %d in %q", limit, i, strings.Count(s, "[output truncated]"), s)
			}
		}
	}
}

func TestFinalizeKeepsSingleMarker(t *testing.T) {
	s := strings.Repeat("a", 45) + Marker + strings.Repeat("b", 30)
	got := finalize(s, 64)
	if got != strings.Repeat("a", 45)+Marker {
		t.Fatalf("got %q", got)
	}
}

// A cursor read over the result bound keeps its oldest whole lines and
// stops its cursor after them: no line is skipped unseen.
func TestFitCursorRead(t *testing.T) {
	r := messages.ReadResult{Text: strings.Repeat("0123456789\n", 100) + "tail", Cursor: 110}
	got := fitCursorRead(r, 10, cursorMetaRoom+55)
	if got.Text != strings.Repeat("0123456789\n", 5) || got.Cursor != 15 || !got.More {
		t.Fatalf("fit: %q cursor %d more %v", got.Text, got.Cursor, got.More)
	}
	if got := fitCursorRead(r, 10, 1<<20); got.Cursor != 110 || got.More {
		t.Fatalf("roomy: %+v", got)
	}
	if got := renderCursorRead(messages.ReadResult{Text: "a\n", Cursor: 7, OmittedFrom: 2, OmittedTo: 6, More: true}, 1000); got != "a\n\n[lines 2-6 are no longer retained]\n[cursor: 7]\n[more output: read again with cursor 7]" {
		t.Fatalf("render %q", got)
	}
}
