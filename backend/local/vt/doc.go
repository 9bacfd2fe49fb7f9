// Package vt is the terminal a session's output is applied to: a screen
// (what a person would see now) and a transcript (what scrolled past, as a
// terminal shows it), kept in memory proportional to the text, not to the
// size of the screen.
//
// It is the one parser of a session's PTY output. Feed never blocks and carries state across chunks, so any chunking gives the
// same screen and transcript. Screen returns the rows as text with the
// cursor, size, whether the alternate screen is on, and a stable hash.
// Transcript returns the final lines since a count and the visible tail;
// Retained, RetainedBytes and FinalLine read final lines one at a time
// (TailFrom the newest lines of the tail), and CursorLine
// says which tail line the cursor is on and what stands before it.
// Modes reports the modes key encoding depends on (application cursor
// keys, bracketed paste).
//
// # The definition: tmux
//
// The screen is what `tmux capture-pane -p` shows for the same bytes at the
// same size, and the transcript is what `tmux capture-pane -p -J -S -`
// shows: the history, then the visible rows, with rows the terminal
// wrapped joined into their logical line. CR and BS move the cursor, so
// overstruck text (`N\bN`) and redrawn progress lines read as their final
// state; erase and cursor moves apply while a line is visible; attributes
// are dropped. A line that scrolled into the history is final and never
// changes; visible lines may.
//
// Which rows join is decided by wrapped flags, and which blanks count by
// the cells a row has used, so the row operations (erase, insert and
// delete lines and characters, scrolling, the alternate screen) follow
// tmux 3.3a's grid step by step, quirks included: the oracle tests feed
// the same bytes to a real tmux, from fixed cases, random sequences and
// recordings of vim, less, man, top, a curses menu and bash. Where tmux's
// capture shows something a person would not see, this package differs on
// purpose:
//
//   - Malformed UTF-8 reads as U+FFFD, one per rejected byte; tmux drops it.
//   - Trailing spaces are trimmed from every transcript line (-J keeps
//     the blanks of cells tmux counts as used).
//   - ED 3 (erase saved lines, part of `clear`) leaves the history alone:
//     final lines are final. A grown screen does not pull lines back out of
//     the history either, and a resize rewraps only the visible rows.
//   - While the alternate screen is on, the transcript's tail is still the
//     main screen (tmux shows the alternate one); the alternate screen is
//     in Screen, and it never reaches the history, as in tmux.
//   - DEC line drawing (ESC ( 0) reads as the box-drawing characters a
//     person sees; tmux's capture shows the ASCII letters it stores.
//   - ICH inserting more cells than it moves, and IL outside the scroll
//     region inserting as many rows as remain, blank what they insert;
//     tmux leaves the old text there in its grid (not on the screen it
//     draws).
//   - A ZWJ after a plain character is kept; tmux drops it.
//   - CHT, VPR, HPR, LNM, DECRQM and DECSTR work as in xterm; tmux 3.3
//     ignores them.
//
// Widths are glibc's wcwidth, which tmux uses: East Asian wide and fullwidth
// characters (CJK, most emoji) take two columns, combining marks and
// format characters join the character before.
//
// # Queries
//
// A program may ask the terminal things and wait for the answer (vim,
// neovim and fzf do at startup and exit). Options.Reply receives the
// answers to device attributes (DA1, DA2), status and cursor position
// reports (DSR 5, DSR 6, DECXCPR), mode queries (DECRQM), the size in
// characters (CSI 18 t) and the colour queries (OSC 10, 11, 12), as xterm
// answers them. It is called from Feed and must not block; the caller
// writes the answers through the session's one write path, ordered with its
// own input. Reports that would type program-controlled text back as input
// (window title reports CSI 20/21 t, clipboard reads OSC 52, DECRQSS and
// XTGETTCAP) are never answered: that is the classic terminal injection,
// and xterm disables them too.
//
// # Observers
//
// The parser hands what it finds besides the screen to an observer, the
// way tmux handles the shell's prompt marks inside its one parser:
// Options.OSC receives every complete OSC payload (at most MaxOSCPayload
// bytes), and answers whether Options.Text should receive what is printed
// next (characters as UTF-8, each executed C0 control as its byte), until
// Text answers no. A session's prompt tracker finds the shell's marker and
// the prompt after it this way; while nobody watches, the text path costs
// one test of a flag per run of text.
//
// # Bounded memory
//
// Nothing grows with the input beyond the configured history: an escape
// sequence keeps at most MaxOSCPayload bytes however long it runs, CSI
// parameters saturate, malformed UTF-8 becomes U+FFFD, and a logical line
// longer than Options.HistoryBytes is cut into several final lines. Rows
// hold cells only as far as something was written on them, and the
// alternate screen exists only while a program uses it: a new 40×160
// emulator costs about 3 KiB, one showing a full 40×160 screen about 30 KB.
//
// # Why a package of its own
//
// Measured on the 2-core development machine (go1.26.8), feeding 4 KiB
// chunks to a 40×160 terminal, and comparing screens with tmux 3.3a's on
// the 49 oracle and transcript cases of this package:
//
//   - charmbracelet/x/vt v0.1.0 (its only tag, marked experimental): 0.3
//     MB/s on `seq 1 300000` (every line feed at the bottom moves every cell
//     of the screen: ultraviolet's Buffer.DeleteLineArea is 83% of the
//     time), 4.6 MB/s on colour-heavy output; a new emulator holds 5.5 MiB
//     (both screens of 6,400 cells of about 100 bytes, and a 4 MiB parser
//     buffer), 11 MiB after 100,000 lines; its scrollback keeps no wrap
//     flags, so wrapped lines cannot be joined; replies go through an
//     io.Pipe that blocks Write until someone reads; 38 of 49 screens equal
//     tmux's.
//   - hinshun/vt10x (last commit 2022): 8.8 and 10 MB/s, 212 KiB idle (two
//     full screens allocated up front); no history at all, no wide
//     characters, malformed UTF-8 dropped instead of U+FFFD, and Write
//     returns short on a character split across chunks; 42 of 49 screens.
//   - this package: 95–190 MB/s on seq and 165–260 MB/s on colour output
//     (the machine is shared; BenchmarkFeed), 2 KiB idle, joined wrapped
//     lines, 48 of 49 screens (the other shows U+FFFD where tmux drops
//     malformed UTF-8). Read from a real PTY, `seq 1 300000` arrives at
//     13 MB/s with or without the emulator in the read loop (BenchmarkPTY,
//     vt/raw 0.98–1.02): the PTY is the limit, not the emulator.
//
// The subset a session needs (cursor movement, erase, scroll regions, the
// alternate screen, wide characters, modes and queries) is a few hundred
// lines on a DEC-style parser of its own, so it is written here; the
// width table comes from golang.org/x/text/width.
package vt
