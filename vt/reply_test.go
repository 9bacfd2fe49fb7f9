package vt

import (
	"testing"
)

// TestReplies: the queries a program waits on are answered as xterm
// answers them, in order, whatever the chunking.
func TestReplies(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"DA1", "\x1b[c\x1b[0c", "\x1b[?62;22c\x1b[?62;22c"},
		{"DA2", "\x1b[>c\x1b[>0c", "\x1b[>1;10;0c\x1b[>1;10;0c"},
		{"DSR 5", "\x1b[5n", "\x1b[0n"},
		{"DSR 6 at home", "\x1b[6n", "\x1b[1;1R"},
		{"DSR 6 after moving", "\x1b[5;10H\x1b[6nabc\x1b[6n", "\x1b[5;10R\x1b[5;13R"},
		{"DSR 6 after output", "hello\r\nworld!\x1b[6n", "\x1b[2;7R"},
		{"DSR 6 at pending wrap", "\x1b[1;75Habcdef\x1b[6n", "\x1b[1;80R"},
		{"DSR 6 in origin mode", "\x1b[3;6r\x1b[?6h\x1b[2;4H\x1b[6n", "\x1b[2;4R"},
		{"DECXCPR", "\x1b[5;10H\x1b[?6n", "\x1b[?5;10;1R"},
		{"DECRQM private", "\x1b[?2004$p\x1b[?2004h\x1b[?2004$p\x1b[?1$p\x1b[?7$p\x1b[?25l\x1b[?25$p",
			"\x1b[?2004;2$y\x1b[?2004;1$y\x1b[?1;2$y\x1b[?7;1$y\x1b[?25;2$y"},
		{"DECRQM alternate screen", "\x1b[?1049$p\x1b[?1049h\x1b[?1049$p", "\x1b[?1049;2$y\x1b[?1049;1$y"},
		{"DECRQM unknown", "\x1b[?2026$p\x1b[?12345$p", "\x1b[?2026;0$y\x1b[?12345;0$y"},
		{"DECRQM ANSI", "\x1b[4$p\x1b[4h\x1b[4$p\x1b[3$p", "\x1b[4;2$y\x1b[4;1$y\x1b[3;0$y"},
		{"OSC 10 and 11 with BEL", "\x1b]10;?\x07\x1b]11;?\x07",
			"\x1b]10;rgb:ffff/ffff/ffff\x07\x1b]11;rgb:0000/0000/0000\x07"},
		{"OSC 11 with ST", "\x1b]11;?\x1b\\", "\x1b]11;rgb:0000/0000/0000\x1b\\"},
		{"OSC 10 asking for two", "\x1b]10;?;?\x07",
			"\x1b]10;rgb:ffff/ffff/ffff\x07\x1b]11;rgb:0000/0000/0000\x07"},
		{"size in characters", "\x1b[18t", "\x1b[8;24;80t"},
		{"setting colours is no query", "\x1b]10;#ffffff\x07\x1b]11;rgb:0/0/0\x1b\\", ""},

		// Reports that would type program-controlled text back as input.
		{"title report refused", "\x1b]2;rm -rf ~\x07\x1b[21t\x1b]1;icon\x07\x1b[20t", ""},
		{"clipboard read refused", "\x1b]52;c;?\x07\x1b]52;c;?\x1b\\", ""},
		{"DECRQSS refused", "\x1bP$qm\x1b\\\x1bP$q\"p\x1b\\", ""},
		{"XTGETTCAP refused", "\x1bP+q544e\x1b\\", ""},
		{"palette query unanswered", "\x1b]4;1;?\x07", ""},
		{"queries inside a cancelled sequence", "\x1b[6\x18n\x1b]10;?\x1a", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := checkChunking(t, 24, 80, Options{}, []byte(tc.in))
			if got.Replies != tc.want {
				t.Errorf("replies %q, want %q", got.Replies, tc.want)
			}
		})
	}
}

// TestReplyWriter: without a writer queries are dropped; a writer that
// keeps and scribbles on its slice cannot change the next answer.
func TestReplyWriter(t *testing.T) {
	e, _ := New(24, 80, Options{})
	e.Feed([]byte("\x1b[c\x1b[6n\x1b]10;?\x07"))

	var got []string
	e, _ = New(24, 80, Options{Reply: func(p []byte) {
		got = append(got, string(p))
		for i := range p {
			p[i] = 'X'
		}
	}})
	e.Feed([]byte("\x1b[c\x1b[c\x1b[>c\x1b[5n\x1b[5n"))
	want := []string{"\x1b[?62;22c", "\x1b[?62;22c", "\x1b[>1;10;0c", "\x1b[0n", "\x1b[0n"}
	if len(got) != len(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("reply %d = %q, want %q", i, got[i], want[i])
		}
	}
}

// TestModes: the input modes a program sets are readable for key encoding.
func TestModes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Modes
	}{
		{"", Modes{}},
		{"\x1b[?1h", Modes{AppCursor: true}},
		{"\x1b[?2004h", Modes{BracketedPaste: true}},
		{"\x1b=", Modes{AppKeypad: true}},
		{"\x1b[?1;2004h\x1b=", Modes{AppCursor: true, AppKeypad: true, BracketedPaste: true}},
		{"\x1b[?1;2004h\x1b=\x1b[?1;2004l\x1b>", Modes{}},
		{"\x1b[?1h\x1b[!p", Modes{}},
		{"\x1b[?2004h\x1bc", Modes{}},
	} {
		if got := checkChunking(t, 24, 80, Options{}, []byte(tc.in)).Modes; got != tc.want {
			t.Errorf("%q: modes %+v, want %+v", tc.in, got, tc.want)
		}
	}
}
