// Package scrollback reads a session's transcript within a byte bound:
// pages counted back from the newest line (Page), cursor reads forward
// from a count of final lines (Since), and the newest bytes of a range of
// lines (Newest), which a send's output is.
//
// The transcript is the terminal emulator's (package vt): its final lines,
// those that scrolled into the history and never change, as far as its
// bounds retain them, then the tail, the lines still on the screen, which
// may change until they scroll. A View is one reading of it; the lines are
// not copied until a read asks for them, and no read holds more than its
// bound plus one line.
//
// # Lines
//
// Lines are numbered from the first final line ever: final lines have the
// numbers a cursor counts, and the tail's lines follow the last of them.
// Text joins lines with '\n': the final lines, each ended by '\n', then
// the tail's lines, the last one unended (the line the cursor is on). A
// transcript with no final line and nothing in its tail has no lines at
// all. Every text is cut on a UTF-8 boundary, so it stays valid UTF-8.
package scrollback
