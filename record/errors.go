package record

import (
	"errors"
	"fmt"
	"io/fs"
)

// Sentinels. A *CorruptError is ErrCorrupt, an *IncompleteError is
// ErrIncomplete and a *ModeError is ErrPermissive under errors.Is.
var (
	// ErrCorrupt: the record is not the chain its writer wrote (a byte
	// changed, a record removed, moved or added, a wrong key).
	ErrCorrupt = errors.New("record: corrupt")
	// ErrIncomplete: the record ends before its end record (the writer
	// stopped, or the file was cut); what is there verifies.
	ErrIncomplete = errors.New("record: incomplete")
	// ErrKeyRequired: the record is keyed and no key was given.
	ErrKeyRequired = errors.New("record: keyed, a key is required to verify it")
	// ErrPermissive: a record's folder or key file that group or others
	// may read or write.
	ErrPermissive = errors.New("record: open to group or others")
	// ErrClosed: Append after Close.
	ErrClosed = errors.New("record: writer closed")
	// ErrNoStart: the first event appended is not KindStart, or Close of
	// a writer that was given none.
	ErrNoStart = errors.New("record: the first event must be KindStart")
	// ErrReservedKind: an appended event of a kind only the writer writes
	// (KindCheckpoint, KindEnd), or a second KindStart.
	ErrReservedKind = errors.New("record: kind is the writer's own")
)

// CorruptError says at which record (numbered from 1, as in the whole
// chain) a record stops being the chain its writer wrote, and why.
type CorruptError struct {
	Record uint64
	Reason string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("record: corrupt at record %d: %s", e.Record, e.Reason)
}

// Unwrap makes a *CorruptError ErrCorrupt.
func (e *CorruptError) Unwrap() error { return ErrCorrupt }

// IncompleteError says a record ends without its end record, after
// Verified, the number of the last whole record (0: none). Everything up
// to it verifies: a log cut by a crash reads as incomplete, never as
// corrupt.
type IncompleteError struct {
	Verified uint64
}

func (e *IncompleteError) Error() string {
	return fmt.Sprintf("record: incomplete at record %d (no end record; records up to %d verify)", e.Verified, e.Verified)
}

// Unwrap makes an *IncompleteError ErrIncomplete.
func (e *IncompleteError) Unwrap() error { return ErrIncomplete }

// ModeError refuses a folder or key file that group or others may read
// or write: a record's folder is 0700 and its files and key 0600.
type ModeError struct {
	Path string
	Mode fs.FileMode
}

func (e *ModeError) Error() string {
	return fmt.Sprintf("record: %s has mode %v; group and others must have no access", e.Path, e.Mode.Perm())
}

// Unwrap makes a *ModeError ErrPermissive.
func (e *ModeError) Unwrap() error { return ErrPermissive }
