// Package terminals is what ptymcp and ptyhost share: the flags that
// confine and time their local terminals (and their log's level and
// format), the service that runs them, and their start-up and signals
// (Command).
package terminals

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/ptyactor/ptyactor/actors"
	"github.com/ptyactor/ptyactor/backend/local"
	"github.com/ptyactor/ptyactor/cmd/internal/cli"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/record"
	"github.com/ptyactor/ptyactor/sandbox"
	"github.com/rs/zerolog"
)

// Flags are the command-line settings of local terminals.
type Flags struct {
	Sandbox      string
	Workspace    string // absolute after Check
	AllowNetwork bool
	Runtime      messages.Config
	LogLevel     string
	LogFormat    string // json, text, or "": text on a terminal, else JSON
	// Record: where every session's record goes ("off": nowhere), the
	// key file that keys its chain, one session's cap, and the folder's
	// caps (its total, and its records' age).
	RecordDir      string
	RecordKey      string
	RecordMaxBytes int64
	RecordMaxTotal int64
	RecordMaxAge   time.Duration
	recordKey      []byte
	// Hide lists folders no sandboxed shell may see, even read-only (the
	// console's, with the URL files of its operator tokens). Start
	// creates each (0700) when missing: a folder made later would be
	// seen by the shells already running.
	Hide []string
	// HideFiles lists files no sandboxed shell may see: the credentials
	// the command's flags name (a bearer token file, TLS private keys);
	// Start adds -record-key's.
	HideFiles []string
}

// DefaultRecordDir is where records go unless -record-dir says otherwise:
// ptyactor/recordings under XDG_STATE_HOME, or ~/.local/state.
func DefaultRecordDir() string {
	state := StateDir()
	if state == "" {
		return "off"
	}
	return filepath.Join(state, "recordings")
}

// StateDir is ptyactor's folder under XDG_STATE_HOME, or ~/.local/state;
// empty when neither is known.
func StateDir() string {
	state := os.Getenv("XDG_STATE_HOME")
	if state == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		state = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(state, "ptyactor")
}

// The recording caps' defaults: one session's record, and the folder's
// total and age, so that a machine that records by default does not fill
// its disk.
const (
	defaultRecordMaxBytes = 64 << 20
	defaultRecordMaxTotal = 1 << 30
	defaultRecordMaxAge   = 30 * 24 * time.Hour
)

// Register defines the flags on fs, with their defaults.
func (f *Flags) Register(fs *flag.FlagSet) {
	f.Runtime = messages.DefaultConfig()
	fs.StringVar(&f.Sandbox, "sandbox", string(sandbox.WorkspaceWrite), "sandbox mode: read-only, workspace-write or danger-full-access")
	fs.StringVar(&f.Workspace, "workspace", "", "workspace root and default cwd of new terminals (default: the current directory)")
	fs.BoolVar(&f.AllowNetwork, "allow-network", false, "let sandboxed terminals use the network")
	fs.IntVar(&f.Runtime.IdleSilenceMs, "idle-silence-ms", f.Runtime.IdleSilenceMs, "output silence after which a send returns inferred_idle")
	fs.IntVar(&f.Runtime.HandoffGraceMs, "handoff-grace-ms", f.Runtime.HandoffGraceMs, "extra silence when a prompt was seen but the shell is not yet in the foreground")
	fs.IntVar(&f.Runtime.TimeoutMs, "timeout-ms", f.Runtime.TimeoutMs, "absolute deadline of a send (and of startup)")
	fs.IntVar(&f.Runtime.PollIntervalMs, "poll-interval-ms", f.Runtime.PollIntervalMs, "longest gap between readiness checks")
	fs.IntVar(&f.Runtime.DisposeGraceMs, "dispose-grace-ms", f.Runtime.DisposeGraceMs, "teardown grace between SIGTERM and SIGKILL")
	fs.IntVar(&f.Runtime.MaxReadBytes, "max-read-bytes", f.Runtime.MaxReadBytes, "per-send output buffer and read page size")
	fs.StringVar(&f.LogLevel, "log-level", "info", "stderr log level: debug, info, warn, error, disabled")
	fs.StringVar(&f.LogFormat, "log-format", "", cli.LogFormatUsage)
	fs.StringVar(&f.RecordDir, "record-dir", "", "folder of the sessions' records (0700; one others can read is refused), or off (default: ptyactor/recordings under $XDG_STATE_HOME or ~/.local/state)")
	fs.StringVar(&f.RecordKey, "record-key", "", "file (0600) holding the key that keys the records' hash chain (HMAC-SHA-256)")
	fs.Int64Var(&f.RecordMaxBytes, "record-max-bytes", defaultRecordMaxBytes, "cap of one session's record; the oldest segments are cut beyond it")
	fs.Int64Var(&f.RecordMaxTotal, "record-max-total", defaultRecordMaxTotal, "cap of the recording folder's records; the oldest closed records are removed beyond it (0: no cap)")
	fs.DurationVar(&f.RecordMaxAge, "record-max-age", defaultRecordMaxAge, "closed records last written longer ago are removed (0: kept whatever their age)")
}

// Check validates the parsed flags and settles the workspace (the
// current directory when unset) as an absolute path.
func (f *Flags) Check() error {
	if _, err := sandbox.ParseMode(f.Sandbox); err != nil {
		return fmt.Errorf("-sandbox: %w", err)
	}
	if f.Workspace == "" {
		wd, err := os.Getwd()
		if err != nil {
			return fmt.Errorf("-workspace: %w", err)
		}
		f.Workspace = wd
	}
	ws, err := filepath.Abs(f.Workspace)
	if err != nil {
		return fmt.Errorf("-workspace: %w", err)
	}
	if st, err := os.Stat(ws); err != nil || !st.IsDir() {
		return fmt.Errorf("-workspace %s: not a directory", ws)
	}
	f.Workspace = ws
	if f.Runtime.MaxReadBytes > f.Runtime.ScrollbackMaxBytes {
		f.Runtime.ScrollbackMaxBytes = f.Runtime.MaxReadBytes
	}
	if err := f.Runtime.Validate(); err != nil {
		return err
	}
	if _, err := zerolog.ParseLevel(f.LogLevel); err != nil {
		return fmt.Errorf("-log-level: %w", err)
	}
	if err := cli.CheckLogFormat(f.LogFormat); err != nil {
		return err
	}
	return f.checkRecord()
}

// checkRecord opens the recording folder (refusing one others can use)
// and reads the key file (refusing one others can read).
func (f *Flags) checkRecord() error {
	if f.RecordDir == "" {
		f.RecordDir = DefaultRecordDir()
	}
	if f.RecordDir == "off" {
		if f.RecordKey != "" {
			return errors.New("-record-key: no records are written (-record-dir off)")
		}
		return nil
	}
	switch {
	case f.RecordMaxBytes < 0:
		return errors.New("-record-max-bytes: must not be negative")
	case f.RecordMaxTotal < 0:
		return errors.New("-record-max-total: must not be negative")
	case f.RecordMaxAge < 0:
		return errors.New("-record-max-age: must not be negative")
	}
	dir, err := filepath.Abs(f.RecordDir)
	if err != nil {
		return fmt.Errorf("-record-dir: %w", err)
	}
	if err := record.OpenDir(dir); err != nil {
		return fmt.Errorf("-record-dir: %w", err)
	}
	f.RecordDir = dir
	if f.RecordKey != "" {
		if f.recordKey, err = record.ReadKeyFile(f.RecordKey); err != nil {
			return fmt.Errorf("-record-key: %w", err)
		}
	}
	return nil
}

// Logger is the command's stderr log at -log-level, in -log-format.
func (f *Flags) Logger(stderr io.Writer, component string) zerolog.Logger {
	lvl, _ := zerolog.ParseLevel(f.LogLevel)
	return cli.Logger(stderr, f.LogFormat, lvl, component)
}

// recording is the backend's record settings from the flags.
func (f *Flags) recording() local.Record {
	if f.RecordDir == "off" {
		return local.Record{}
	}
	host, _ := os.Hostname()
	return local.Record{Dir: f.RecordDir, Key: f.recordKey, MaxBytes: f.RecordMaxBytes,
		MaxTotal: f.RecordMaxTotal, MaxAge: f.RecordMaxAge, Host: host}
}

// hidden is what the sandbox hides: the folders of Hide, created when
// missing (one that cannot be made is logged and, missing, left out by
// the sandbox: there is nothing in it to hide), and the files of
// HideFiles and -record-key, absolute.
func (f *Flags) hidden(log zerolog.Logger) []string {
	var out []string
	for _, d := range f.Hide {
		if err := os.MkdirAll(d, 0o700); err != nil {
			log.Warn().Err(err).Str("folder", d).Msg("cannot create a folder hidden from sandboxed shells")
		}
		out = append(out, d)
	}
	files := f.HideFiles
	if f.RecordKey != "" {
		files = append(files[:len(files):len(files)], f.RecordKey)
	}
	for _, p := range files {
		if p == "" {
			continue
		}
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		out = append(out, p)
	}
	return out
}

// Start runs a service with the local backend, confined as the flags say.
// stop shuts the service down (every session closed, trees torn down),
// logging what it left.
func (f *Flags) Start(ctx context.Context, log zerolog.Logger) (svc *actors.Service, stop func(), err error) {
	// The subreaper closes teardown's one escape (a daemon orphaned out of
	// the shell's session); it exists on Linux only, and elsewhere the
	// backend would refuse every spawn with it on.
	bopts := local.Options{Subreaper: runtime.GOOS == "linux", Log: log, Record: f.recording(), Hide: f.hidden(log)}
	if err := bopts.Confine(f.Sandbox, f.Workspace, f.AllowNetwork); err != nil {
		return nil, nil, err
	}
	if svc, err = actors.NewService(actors.Options{Config: f.Runtime, Log: log}); err != nil {
		return nil, nil, err
	}
	stop = func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		if err := svc.Shutdown(ctx); err != nil {
			log.Error().Err(err).Msg("shutdown left failures")
		}
	}
	if _, err := svc.RegisterBackend(ctx, local.New(bopts)); err != nil {
		stop()
		return nil, nil, err
	}
	return svc, stop, nil
}
