package record

import (
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"
)

// appendEvent appends ev's JSON to dst: exactly the bytes json.Marshal
// gives (a test holds them equal), written by hand for the events a
// session makes by the thousand (output and input text), which the
// reflection of encoding/json would spend most of the writer's time on.
// Every other event goes through json.Marshal.
func appendEvent(dst []byte, ev *Event) ([]byte, error) {
	if !plainText(ev) {
		e, err := json.Marshal(ev)
		return append(dst, e...), err
	}
	dst = append(dst, `{"seq":`...)
	dst = strconv.AppendUint(dst, ev.Seq, 10)
	dst = append(dst, `,"t":`...)
	dst = strconv.AppendInt(dst, int64(ev.Mono), 10)
	dst = append(dst, `,"wall":"`...)
	dst = ev.Wall.AppendFormat(dst, time.RFC3339Nano)
	dst = append(dst, `","k":`...)
	dst = appendJSONString(dst, string(ev.Kind))
	if ev.Data != "" {
		dst = append(dst, `,"d":`...)
		dst = appendJSONString(dst, ev.Data)
	}
	if ev.Source != "" {
		dst = append(dst, `,"src":`...)
		dst = appendJSONString(dst, ev.Source)
	}
	return append(dst, '}'), nil
}

// plainText reports an event of only the fields appendEvent writes itself,
// with a wall time whose format needs no checks (json.Marshal refuses a
// year past 9999).
func plainText(ev *Event) bool {
	return (ev.Kind == KindOutput || ev.Kind == KindInput || ev.Kind == KindForeign) &&
		ev.Raw == nil && !ev.Secret && ev.Len == 0 && ev.Rows == 0 && ev.Cols == 0 &&
		ev.Start == nil && ev.Send == nil && ev.Settle == nil && ev.Signal == nil && ev.Exit == nil &&
		ev.ExitCode == nil && ev.Checkpoint == nil && ev.Count == 0 &&
		ev.Wall.Year() >= 0 && ev.Wall.Year() <= 9999 && utf8.ValidString(ev.Data)
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s quoted as encoding/json quotes it: control
// characters, '"' and '\\' escaped, and '<', '>', '&', U+2028 and U+2029
// as \u escapes (its HTML-safe default). s is valid UTF-8.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			start = i + size
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
