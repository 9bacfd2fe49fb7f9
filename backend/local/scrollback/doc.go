// Package scrollback holds a session's sanitized output in bounded memory: the
// retained scrollback that reads page through (Buffer), and the per-send
// buffer that keeps the most recent output of one send (Tail).
//
// Input is text already sanitized by termtext: valid UTF-8 with '\n' line
// breaks. Both buffers cut only on UTF-8 boundaries, so what they hand out
// stays valid UTF-8.
//
// # Lines
//
// The retained text is the concatenation of everything written, minus what
// the bounds dropped from its front. Its lines are the pieces of splitting it
// on '\n': "a\nb" is two lines, "a\n" is two lines of which the last is empty
// (the line the cursor is on), and "" is no lines at all. Buffer keeps at most
// maxLines such pieces and at most maxBytes bytes, dropping whole lines from
// the front first and then, if one line alone is too long, the front of that
// line. Pages count lines back from the newest one.
//
// # Memory
//
// Both types allocate lazily, so an idle or empty buffer holds no large array.
// Text lives in one contiguous window that is compacted in place as the front
// is dropped, and a Buffer indexes its line breaks in a ring bounded by
// maxLines, so writing costs amortized O(bytes written) with no allocation
// per line, and memory stays within about 2×maxBytes plus one word per
// retained line, whatever the input.
package scrollback
