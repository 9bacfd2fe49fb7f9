package linux

import (
	"slices"
	"testing"
)

func TestParseEpollFdinfo(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []epollTarget
	}{
		{
			name: "linux 6.18",
			in: "pos:\t0\nflags:\t02000002\nmnt_id:\t17\nino:\t20\n" +
				"tfd:        0 events:       19 data:                0  pos:0 ino:144fa sdev:f\n" +
				"tfd:        4 events: 80000019 data:                4  pos:0 ino:1450e sdev:f\n",
			want: []epollTarget{{0, 0x19}, {4, 0x80000019}},
		},
		{
			name: "before 3.16 (no pos, ino, sdev)",
			in:   "pos:\t0\nflags:\t02\ntfd:        5 events:        1 data:                5\n",
			want: []epollTarget{{5, 1}},
		},
		{
			name: "glued values and tabs",
			in:   "tfd:7\tevents:2019\tdata:7\n",
			want: []epollTarget{{7, 0x2019}},
		},
		{
			name: "empty interest list",
			in:   "pos:\t0\nflags:\t02000002\nmnt_id:\t17\nino:\t20\n",
		},
		{
			name: "bad lines are dropped",
			in: "tfd:        x events:       19\n" +
				"tfd:       -3 events:       19\n" +
				"tfd:        1 events:       zz\n" +
				"tfd:        2 data: 0\n" +
				"tfd:\n" +
				"tfd:        3 events: 100000000\n" +
				"tfd:        6 events:        1",
			want: []epollTarget{{6, 1}},
		},
		{
			// Found by FuzzEpollFdinfo: the kernel prints no sign and pads
			// with ASCII blanks; these once named the terminal's fd 0.
			name: "signs and Unicode spaces are malformed",
			in: "tfd:       +0 events:       19\n" +
				"tfd:\u00a00 events:       19\n" +
				"tfd:        0\u2000events: 19\n",
		},
	}
	for _, tt := range tests {
		if got := parseEpollFdinfo([]byte(tt.in)); !slices.Equal(got, tt.want) {
			t.Errorf("%s: got %+v; want %+v", tt.name, got, tt.want)
		}
	}
}
