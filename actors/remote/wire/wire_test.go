package wire

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/record"
	"google.golang.org/protobuf/proto"
)

func TestErrorsKeepTheirClassAcrossTheWire(t *testing.T) {
	cleanup := &messages.CleanupError{Reason: "model request", Survivors: []int{7, 9}}
	for _, tc := range []struct {
		err  error
		want []error
	}{
		{messages.NoSession("pty-1"), []error{messages.ErrNoSession}},
		{messages.Errorf(messages.CodeSendActive, "busy"), []error{messages.ErrSendActive}},
		{messages.InvalidArgument("count must be >= 1"), []error{messages.ErrInvalidArgument}},
		{&messages.ConfigError{Field: "x", Msg: "bad"}, []error{messages.ErrConfig, messages.ErrInvalidArgument}},
		{fmt.Errorf("send: %w", messages.ErrSessionClosing), []error{messages.ErrSessionClosing}},
		{&messages.BackendCleanupError{SpawnErr: context.Canceled, CleanupErr: cleanup}, []error{context.Canceled}},
		{fmt.Errorf("%w: gone", messages.ErrHostLost), []error{messages.ErrHostLost}},
		{errors.New("something else"), []error{messages.ErrTransport}},
	} {
		got := ErrorFrom(roundTrip(t, ErrorTo(tc.err)))
		if got.Error() != tc.err.Error() {
			t.Errorf("text %q, want %q", got, tc.err)
		}
		for _, w := range tc.want {
			if !errors.Is(got, w) {
				t.Errorf("%q: errors.Is(%v) false", tc.err, w)
			}
		}
	}
	var ce *messages.CleanupError
	got := ErrorFrom(roundTrip(t, ErrorTo(fmt.Errorf("close: %w", cleanup))))
	if !errors.As(got, &ce) || ce.Reason != "model request" || len(ce.Survivors) != 2 || ce.Survivors[1] != 9 {
		t.Fatalf("cleanup error lost its details: %#v", ce)
	}
	var me *messages.Error
	if got := ErrorFrom(ErrorTo(messages.NoSession("pty-2"))); !errors.As(got, &me) || me.Msg != "unknown PTY session pty-2" {
		t.Fatalf("coded error: %#v", me)
	}
	if ErrorTo(nil) != nil || ErrorFrom(nil) != nil {
		t.Fatal("nil must stay nil")
	}
}

func roundTrip(t *testing.T, e *Error) *Error {
	t.Helper()
	b, err := proto.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var out Error
	if err := proto.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return &out
}

// A renamed error says the client's id where the host's said its own,
// and still matches its classes; the original is untouched.
func TestRenamedKeepsTheClass(t *testing.T) {
	w := ErrorTo(messages.Errorf(messages.CodeSendActive, "PTY session pty-host already has an active send"))
	err := ErrorFrom(Renamed(w, "pty-host", "pty-client"))
	if err.Error() != "PTY session pty-client already has an active send" || !errors.Is(err, messages.ErrSendActive) {
		t.Fatalf("renamed: %q, SEND_ACTIVE %v", err, errors.Is(err, messages.ErrSendActive))
	}
	var coded *messages.Error
	if !errors.As(err, &coded) || strings.Contains(coded.Msg, "pty-host") {
		t.Fatalf("the coded error: %+v", coded)
	}
	if !strings.Contains(w.Message, "pty-host") {
		t.Fatalf("Renamed changed its argument: %q", w.Message)
	}
	w = ErrorTo(&messages.CleanupError{Reason: "close pty-host", Survivors: []int{7}, Err: errors.New("pty-host still runs")})
	var ce *messages.CleanupError
	if err := ErrorFrom(Renamed(w, "pty-host", "pty-client")); !errors.As(err, &ce) || len(ce.Survivors) != 1 || strings.Contains(err.Error(), "pty-host") {
		t.Fatalf("renamed cleanup error: %q %+v", err, ce)
	}
	if Renamed(nil, "pty-host", "pty-client") != nil {
		t.Fatal("nil renamed to an error")
	}
}

func TestSplitAndAssemble(t *testing.T) {
	big := &Reply{Call: 7, Body: &Reply_Read{Read: &ReadReply{Text: strings.Repeat("x", 3*MaxChunk+5)}}}
	parts, err := Split(7, big)
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) != 4 {
		t.Fatalf("%d parts", len(parts))
	}
	a := NewAssembler(1<<20, 2)
	var whole []byte
	for i, p := range parts {
		c := p.(*Chunk)
		if proto.Size(c) > MaxChunk+16 {
			t.Fatalf("chunk %d is %d bytes", i, proto.Size(c))
		}
		if whole, err = a.Add(c); err != nil {
			t.Fatal(err)
		}
		if (whole != nil) != (i == len(parts)-1) {
			t.Fatalf("piece %d: complete=%v", i, whole != nil)
		}
	}
	var got Reply
	if err := proto.Unmarshal(whole, &got); err != nil || !proto.Equal(&got, big) {
		t.Fatalf("reassembled differs (%v)", err)
	}
	small := &Reply{Call: 8}
	if parts, _ := Split(8, small); len(parts) != 1 || parts[0] != small {
		t.Fatal("a small message is sent as is")
	}

	// A gap, an oversized message and too many at once are errors.
	if _, err := a.Add(&Chunk{Call: 1, Seq: 1}); !errors.Is(err, ErrChunk) {
		t.Fatalf("gap: %v", err)
	}
	a = NewAssembler(10, 1)
	if _, err := a.Add(&Chunk{Call: 1, Data: make([]byte, 11)}); !errors.Is(err, ErrChunk) {
		t.Fatalf("oversize: %v", err)
	}
	_, _ = a.Add(&Chunk{Call: 2, Data: []byte("a")})
	if _, err := a.Add(&Chunk{Call: 3, Data: []byte("b")}); !errors.Is(err, ErrChunk) {
		t.Fatalf("too many: %v", err)
	}
}

func TestTokensAreNeverFormatted(t *testing.T) {
	const secret = "s3cr3t-token-value"
	req := &Request{Call: 1, Token: secret, Body: &Request_List{List: &List{}}}
	rep := &Reply{Call: 1, Body: &Reply_OpenOwner{OpenOwner: &OpenOwnerReply{Token: secret, ResumeToken: secret}}}
	resume := &ResumeOwner{ResumeToken: secret}
	resumed := &ResumeOwnerReply{Token: secret}
	var b strings.Builder
	log := slog.New(slog.NewTextHandler(&b, nil))
	log.Info("x", "req", req, "rep", rep, "open", rep.GetOpenOwner(), "resume", resume, "resumed", resumed)
	fmt.Fprintf(&b, "%v %s %+v %v %v %+v", req, req, rep, rep.GetOpenOwner(), resume, resumed)
	if strings.Contains(b.String(), secret) {
		t.Fatalf("a token was printed: %s", b.String())
	}
}

func TestConversionsRoundTrip(t *testing.T) {
	code := 3
	res := messages.SendResult{Viewport: "v", WaitReason: messages.WaitStdinRead, Status: messages.ExitedWith(2), ExitCode: &code, Reader: "python3", Elapsed: 5, Unwritten: 1, FirstUnwritten: "l", Secret: true, Truncated: true, ForeignInput: `62;22c\x1b`, Seq: 42}
	got := SendResultFrom(SendResultTo(res))
	if got.Seq != 42 || got.Viewport != res.Viewport || *got.ExitCode != 3 || *got.Status.ExitCode != 2 || got.Reader != res.Reader || got.Elapsed != 5 || !got.Secret || got.Unwritten != 1 || got.ForeignInput != res.ForeignInput {
		t.Fatalf("%+v", got)
	}
	off := 5
	r := ReadRequestFrom(ReadTo("s", messages.ReadRequest{Offset: &off}))
	if r.Count != nil || *r.Offset != 5 {
		t.Fatalf("%+v", r)
	}
}

// A signal's outcome crosses the wire whole, the reason a signal was
// dropped included; one delivered carries none.
func TestSignalReplyRoundTrip(t *testing.T) {
	for _, res := range []messages.SignalResult{
		{Delivered: true, TargetPgid: 77},
		{TargetPgid: 4242, Reason: "sleep (pid 4242) runs in the shell's process, pid 1 of the sandbox's pid namespace, and has no handler for SIGTERM: the kernel drops the signal."},
	} {
		b, err := proto.Marshal(&Reply{Call: 1, Body: &Reply_Signal{Signal: SignalResultTo(res)}})
		if err != nil {
			t.Fatal(err)
		}
		var rep Reply
		if err := proto.Unmarshal(b, &rep); err != nil {
			t.Fatal(err)
		}
		if got := SignalResultFrom(rep.GetSignal()); got != res {
			t.Fatalf("round trip: %+v, want %+v", got, res)
		}
	}
	if got := SignalResultFrom(nil); got != (messages.SignalResult{}) {
		t.Fatalf("nil: %+v", got)
	}
}

func TestTypeNames(t *testing.T) {
	for want, m := range map[string]proto.Message{RequestType: &Request{}, ReplyType: &Reply{}, ChunkType: &Chunk{}} {
		if got := string(proto.MessageName(m)); got != want {
			t.Errorf("%T is %q on the wire, the constant says %q", m, got, want)
		}
	}
}

func TestScreenAndResizeRoundTrip(t *testing.T) {
	sc := messages.Screen{Rows: []string{"$ hello", ""}, CursorRow: 1, CursorCol: 7, Height: 2, Width: 40, AltScreen: true, Hash: "h", Seq: 9}
	b, err := proto.Marshal(&Reply{Call: 1, Body: &Reply_Screen{Screen: ScreenTo(sc)}})
	if err != nil {
		t.Fatal(err)
	}
	var rep Reply
	if err := proto.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	got := ScreenFrom(rep.GetScreen())
	if len(got.Rows) != 2 || got.Rows[0] != sc.Rows[0] || got.CursorRow != 1 || got.CursorCol != 7 || got.Height != 2 || got.Width != 40 || !got.AltScreen || got.Hash != "h" || got.Seq != 9 {
		t.Fatalf("%+v", got)
	}
	if id, rows, cols, epoch := ResizeFrom(ResizeTo("s", 30, 100, 4)); id != "s" || rows != 30 || cols != 100 || epoch != 4 {
		t.Fatalf("resize %s %dx%d epoch %d", id, rows, cols, epoch)
	}
	// A size beyond int stays out of range rather than wrapping into it.
	if _, rows, _, _ := ResizeFrom(&Resize{Rows: 1 << 62}); rows < 1<<30 {
		t.Fatalf("rows %d", rows)
	}
}

func TestRequestSessionRoutes(t *testing.T) {
	const s = "pty-3"
	for _, tc := range []struct {
		req  *Request
		want string
	}{
		{&Request{Body: &Request_StartSend{StartSend: StartSendTo(s, messages.SendRequest{Text: "x"})}}, s},
		{&Request{Body: &Request_AwaitSend{AwaitSend: &AwaitSend{Session: s}}}, s},
		{&Request{Body: &Request_ReadSendOutput{ReadSendOutput: &ReadSendOutput{Session: s}}}, s},
		{&Request{Body: &Request_CancelSend{CancelSend: &CancelSend{Session: s}}}, s},
		{&Request{Body: &Request_Read{Read: &Read{Session: s}}}, s},
		{&Request{Body: &Request_Signal{Signal: &Signal{Session: s}}}, s},
		{&Request{Body: &Request_Kill{Kill: &Kill{Session: s}}}, s},
		{&Request{Body: &Request_Describe{Describe: &Describe{Session: s}}}, s},
		{&Request{Body: &Request_GetScreen{GetScreen: &GetScreen{Session: s}}}, s},
		{&Request{Body: &Request_Resize{Resize: ResizeTo(s, 24, 80, 0)}}, s},
		{&Request{Body: &Request_TakeControl{TakeControl: TakeControlTo(s, messages.TakeControlRequest{})}}, s},
		{&Request{Body: &Request_ControlInput{ControlInput: &ControlInput{Session: s, Epoch: 1}}}, s},
		{&Request{Body: &Request_ReturnControl{ReturnControl: &ReturnControl{Session: s, Epoch: 1}}}, s},
		{&Request{Body: &Request_EnterSecret{EnterSecret: EnterSecretTo(s, messages.SecretPrompt{Session: "pty-client"}, []byte("x"))}}, s},
		{&Request{Body: &Request_Mark{Mark: &Mark{Session: s, Label: "x"}}}, s},
		{&Request{Body: &Request_WatchStart{WatchStart: &WatchStart{Session: s, Since: 7}}}, s},
		{&Request{Body: &Request_WatchAck{WatchAck: &WatchAck{Session: s, Stream: 9, Batch: 1}}}, s},
		{&Request{Body: &Request_WatchStop{WatchStop: &WatchStop{Session: s, Stream: 9}}}, s},
		{&Request{Body: &Request_FetchRecording{FetchRecording: &FetchRecording{ClientSession: s}}}, ""},
		{&Request{Body: &Request_Spawn{Spawn: &Spawn{ClientSession: s}}}, ""},
		{&Request{Body: &Request_List{List: &List{}}}, ""},
		{&Request{Body: &Request_Heartbeat{Heartbeat: &Heartbeat{}}}, ""},
		{&Request{}, ""},
	} {
		if got := tc.req.Session(); got != tc.want {
			t.Errorf("%T: Session() = %q, want %q", tc.req.GetBody(), got, tc.want)
		}
	}
}

func TestStartSendRoundTrip(t *testing.T) {
	r := messages.SendRequest{Text: "ls", Submit: true, Raw: true, Keys: []string{"C-c"}, Paste: true, Screen: true,
		Wait: messages.WaitPolicy{Timeout: 3, Pattern: "\\$"}}
	w := StartSendTo("pty-1", r)
	if got := SendRequestFrom(roundTripMsg(t, w)); !reflect.DeepEqual(got, r) || w.GetSession() != "pty-1" {
		t.Fatalf("round trip: %+v, want %+v", got, r)
	}
}

func roundTripMsg(t *testing.T, m *StartSend) *StartSend {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	out := &StartSend{}
	if err := proto.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// A close's report crosses with its record: where the file is on the host
// and the end of its chain.
func TestKillRoundTripCarriesTheRecording(t *testing.T) {
	in := messages.CloseReport{Killed: []int{7}, Recording: &messages.Recording{Path: "/r/s.rec", Host: "h1", Records: 42, SHA256: "ab"}}
	closed, got := KillFrom(KillTo(true, in))
	if !closed || got.Recording == nil || *got.Recording != *in.Recording || len(got.Killed) != 1 {
		t.Fatalf("%v %+v", closed, got)
	}
	if _, got := KillFrom(KillTo(true, messages.CloseReport{})); got.Recording != nil {
		t.Fatalf("no record became %+v", got.Recording)
	}
}

// The watch stream's conversions keep what a viewer needs: an output's
// bytes exactly (not always valid UTF-8), a resize's size, every event's
// number and kind; and the picture and the activity whole.
func TestWatchConversionsRoundTrip(t *testing.T) {
	wall := time.Unix(1700000000, 123)
	for _, ev := range []record.Event{
		{Seq: 3, Kind: record.KindOutput, Data: "a\xe2\x82", Wall: wall},
		{Seq: 4, Kind: record.KindResize, Rows: 30, Cols: 100, Wall: wall},
		{Seq: 5, Kind: record.KindSettle, Wall: wall},
	} {
		var w Event
		b, _ := proto.Marshal(EventTo(ev))
		if err := proto.Unmarshal(b, &w); err != nil {
			t.Fatal(err)
		}
		if got := EventFrom(&w); !reflect.DeepEqual(got, ev) {
			t.Errorf("event %+v came back %+v", ev, got)
		}
	}
	p := &messages.Picture{Draw: []byte("\x1b[1;1Hhi\xff"), Rows: 24, Cols: 80, Seq: 9}
	if got := PictureFrom(PictureTo(p)); !reflect.DeepEqual(got, p) {
		t.Errorf("picture %+v came back %+v", p, got)
	}
	code := 2
	a := &messages.Activity{Badge: messages.BadgeExited, Reader: "cat", Program: "vim", Cwd: "/tmp", ExitCode: &code, LastOutput: wall, Rows: 24, Cols: 80, Seq: 12}
	if got := ActivityFrom(ActivityTo(a)); !reflect.DeepEqual(got, a) {
		t.Errorf("activity %+v came back %+v", a, got)
	}
	if ActivityTo(nil) != nil || PictureTo(nil) != nil {
		t.Error("nil must stay nil")
	}
}
