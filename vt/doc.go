// Package vt is the terminal a session's output is applied to: a screen
// (what a person would see now) and a transcript (what scrolled past, as a
// terminal shows it), kept in memory proportional to the text, not to the
// size of the screen.
//
// It is the one parser of a session's PTY output, in a room of its own:
// the local backend feeds it live and record/replay feeds it a record,
// and it imports neither. Feed never blocks and carries state across
// chunks, so any chunking gives the same screen and transcript. Screen returns the rows as text with the
// cursor, size, whether the alternate screen is on, and a stable hash.
// Transcript returns the final lines since a count and the visible tail;
// Retained, RetainedBytes and FinalLine read final lines one at a time
// (TailFrom the newest lines of the tail), and CursorLine
// says which tail line the cursor is on and what stands before it.
// Modes reports the modes key encoding depends on (application cursor
// keys, bracketed paste, mouse tracking) and those that decide how what
// follows is drawn. Cell gives a cell's character and pen (colours and
// attributes), and Render the terminal's state as output that draws it
// again on a new terminal.
//
// # The definition: tmux
//
// The screen is what `tmux capture-pane -p` shows for the same bytes at the
// same size, and the transcript is what `tmux capture-pane -p -J -S -`
// shows: the history, then the visible rows, with rows the terminal
// wrapped joined into their logical line. CR and BS move the cursor, so
// overstruck text (`N\bN`) and redrawn progress lines read as their final
// state; erase and cursor moves apply while a line is visible; the text
// has no attributes (the screen keeps them per cell: see below). A line
// that scrolled into the history is final and never changes; visible
// lines may.
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
// # Attributes and Render
//
// Each cell keeps the pen it was drawn with (SGR: the 16, 256 and 24-bit
// colours in their ';' and ':' forms, bold, dim, italic, underline and its
// style, blink, reverse, invisible, strikethrough, overline), so that a
// person who starts watching while vim or top runs sees the screen in
// colour. Erasing, inserting, deleting and scrolling fill with the current
// background colour, as in tmux and xterm (BCE; a scroll caused by a wrap
// fills with the default one, as in tmux). The oracle tests compare every
// cell's pen with what `tmux capture-pane -e` shows. A row holds pens only
// once something on it was drawn with one: the emulator interns the
// distinct pens in a table (at most 65,535; when it fills, it is
// compacted to the pens on the screens), and such a row holds a two-byte
// index per cell.
//
// Render writes what a new terminal of the same size (xterm.js in a
// browser) needs to show the same and to draw what follows the same: the
// newest history lines as text, scrolled into its scrollback; the main
// screen; the alternate screen over it while a program shows one; the
// saved cursor, tab stops, scroll region, modes, cursor and pen. Rows the
// terminal wrapped are drawn so that the new terminal wraps them too. The
// tests feed Render's output to a new emulator and compare every cell's
// text and pen, the modes and the cursor, for fixed screens and random
// streams. Two states tmux's grid keeps and a terminal such as xterm.js
// does not are drawn as well as the new terminal allows: halves of a wide
// character that ICH, DCH or an erase moved apart (a person sees blanks
// there), and a cursor that DECRC put below the scroll region in origin
// mode (placed at the region's bottom).
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
// hold cells only as far as something was written on them (and pens only
// once one was drawn with one), and the alternate screen exists only
// while a program uses it: a new 40×160 emulator costs about 3.5 KiB, one
// showing a full 40×160 screen about 34 KB, 44 KB in colour (TestMemory).
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
//     (the machine is shared; BenchmarkFeed; measured before pens were
//     kept, which costs colour output about 10% and seq nothing), 2 KiB
//     idle (3.5 KiB since pens are kept), joined wrapped
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
