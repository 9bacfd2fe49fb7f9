// Package termtext turns the raw byte stream of a terminal into plain text an
// agent can read, and reports the OSC sequences found along the way (the shell's
// prompt marker travels as one).
//
// A Parser is a streaming state machine: a PTY read may end anywhere, inside an
// escape sequence, between CR and LF, or in the middle of a UTF-8 character, so
// the parser carries that state into the next Feed. The output does not depend
// on where the chunks were split: for every way of cutting an input into chunks,
// the sink sees the same text, the same OSC payloads and the same interleaving of
// the two.
//
// # What passes and what does not
//
//   - Printable text passes, as valid UTF-8. Malformed UTF-8 becomes U+FFFD,
//     one per byte that utf8.DecodeRune rejects. C1 controls encoded as UTF-8
//     (U+0080–U+009F) are text; raw 8-bit C1 bytes are malformed UTF-8.
//   - CR LF and a lone CR both become "\n". A CR stays pending until the next
//     byte that produces output decides it, so a CRLF split across reads, or
//     separated by a stripped sequence ("\r\x1b[K\n"), is still one newline. A
//     pending CR is written out before a reported OSC, so a marker never
//     appears to precede the line break that came before it.
//   - BEL, NUL, DEL, and CAN and SUB outside a sequence are removed: none of
//     them means anything in a transcript. The other C0 controls (TAB, BS, VT,
//     FF, ...) pass unchanged.
//   - CSI (ESC [ ... final byte 0x40–0x7E), two-byte and nF escapes (ESC 7,
//     ESC =, ESC ( B) are stripped.
//   - OSC (ESC ] ... BEL or ESC \) is stripped from the text; its payload is
//     handed to Sink.OSC when it fits in MaxOSCPayload bytes.
//   - DCS, SOS, PM and APC (ESC P, ESC X, ESC ^, ESC _) are stripped up to
//     their ST (ESC \), payload included.
//   - CAN or SUB inside a sequence cancels it. ESC inside a sequence starts a
//     new one, except that ESC \ terminates an OSC or a DCS-like string. A byte
//     that cannot continue a CSI or an ESC sequence (a C0 control, a non-ASCII
//     byte) abandons the sequence and is then treated as ordinary input.
//
// # Bounded memory
//
// The parser never buffers more than MaxOSCPayload bytes of a sequence, so an
// unterminated sequence costs constant memory however long it runs: input is
// discarded until the terminator, and text resumes after it.
package termtext
