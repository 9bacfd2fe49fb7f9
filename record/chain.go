package record

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"hash"
)

// HashSize is the size of a chain hash: SHA-256, or HMAC-SHA-256 when the
// chain is keyed.
const HashSize = sha256.Size

// A record file is one JSON line per record,
//
//	{"h":"<hex of this record's chain hash>","e":<the event's JSON>}
//
// with exactly this framing (no spaces, "h" first), so that the bytes the
// hash covers are found without re-encoding anything: the hash of record
// n is SHA-256(hash(n-1) || the bytes of e as stored), hash(0) 32 zero
// bytes, or HMAC-SHA-256 under the key over the same input.
const (
	linePrefix = `{"h":"`
	lineMiddle = `","e":`
	lineSuffix = "}\n"
	// frameLen is the bytes of a line that are not the event's.
	frameLen = len(linePrefix) + 2*HashSize + len(lineMiddle) + len(lineSuffix)
)

// chain computes the hashes of a record's records, one after another.
type chain struct {
	prev [HashSize]byte
	// mac is nil for a plain SHA-256 chain.
	mac hash.Hash
	sum hash.Hash
}

func newChain(key []byte, prev [HashSize]byte) *chain {
	c := &chain{prev: prev, sum: sha256.New()}
	if key != nil {
		c.mac = hmac.New(sha256.New, key)
	}
	return c
}

// next returns the hash of the record whose event bytes are e, and
// makes it the chain's newest.
func (c *chain) next(e []byte) [HashSize]byte {
	h := c.sum
	if c.mac != nil {
		h = c.mac
	}
	h.Reset()
	h.Write(c.prev[:])
	h.Write(e)
	h.Sum(c.prev[:0])
	return c.prev
}

// appendLine appends the record line of event bytes e with hash h.
func appendLine(dst []byte, h [HashSize]byte, e []byte) []byte {
	dst = append(dst, linePrefix...)
	dst = hex.AppendEncode(dst, h[:])
	dst = append(dst, lineMiddle...)
	dst = append(dst, e...)
	return append(dst, lineSuffix...)
}

// splitLine returns the hash and the event bytes of a record line (its
// newline removed), or ok false when the framing is not exactly
// appendLine's.
func splitLine(line []byte) (h [HashSize]byte, e []byte, ok bool) {
	if len(line) < frameLen-1 || !bytes.HasPrefix(line, []byte(linePrefix)) || line[len(line)-1] != '}' {
		return h, nil, false
	}
	hx := line[len(linePrefix) : len(linePrefix)+2*HashSize]
	rest := line[len(linePrefix)+2*HashSize:]
	if !bytes.HasPrefix(rest, []byte(lineMiddle)) {
		return h, nil, false
	}
	// Lower-case hex only, as appendLine writes it: another spelling of
	// the same hash would be a second file with the same chain.
	for _, b := range hx {
		if !('0' <= b && b <= '9' || 'a' <= b && b <= 'f') {
			return h, nil, false
		}
	}
	if _, err := hex.Decode(h[:], hx); err != nil {
		return h, nil, false
	}
	return h, rest[len(lineMiddle) : len(rest)-1], true
}
