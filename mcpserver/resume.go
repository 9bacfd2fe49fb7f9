package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/ptyactor/ptyactor/actors"
	"github.com/ptyactor/ptyactor/actors/remote"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/rs/zerolog"
)

// ptymcp -host -resume-file FILE: the stdio connection's owner outlives
// this process. FILE (mode 0600: it holds secrets) keeps the owner's
// resume token on each host. When the stdio connection ends (EOF, or
// SIGTERM as an MCP client restarts its server), the owner is detached
// instead of disposed: its terminals keep running on the hosts for their
// -client-grace, and the next ptymcp started with the same FILE resumes
// them, with the same ids.

// resumeState is the resume file's content.
type resumeState struct {
	// Hosts maps a host's address (as given to -host) to the owner's
	// resume token there.
	Hosts map[string]string `json:"hosts"`
}

// readResumeFile reads FILE; a missing file is an empty state. A file
// that others may read is refused: the tokens in it are credentials.
func readResumeFile(path string) (resumeState, error) {
	st := resumeState{Hosts: map[string]string{}}
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("-resume-file: %w", err)
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o077 != 0 {
		return st, fmt.Errorf("-resume-file %s: want a regular file of mode 0600 (it holds secrets), got %v", path, fi.Mode())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return st, fmt.Errorf("-resume-file: %w", err)
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return st, fmt.Errorf("-resume-file %s: %w", path, err)
	}
	if st.Hosts == nil {
		st.Hosts = map[string]string{}
	}
	return st, nil
}

// writeResumeFile replaces FILE atomically, mode 0600.
func writeResumeFile(path string, st resumeState) (err error) {
	data, err := json.Marshal(st)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("-resume-file: %w", err)
	}
	defer func() {
		if err != nil {
			_ = os.Remove(f.Name())
		}
	}()
	// CreateTemp makes it 0600.
	if _, err = f.Write(data); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("-resume-file: %w", err)
	}
	return os.Rename(f.Name(), path)
}

// resumeOwner makes the stdio connection's owner: on each host the file
// names, it takes back the owner's terminals (a token whose grace is over
// is logged and dropped); then it writes the file with the owner's resume
// token on every host.
func (h HostsConfig) resumeOwner(ctx context.Context, svc *actors.Service, log zerolog.Logger) (messages.Owner, error) {
	st, err := readResumeFile(h.ResumeFile)
	if err != nil {
		return messages.Owner{}, err
	}
	o, err := svc.NewOwner(ctx, "mcp-stdio")
	if err != nil {
		return messages.Owner{}, err
	}
	fail := func(err error) (messages.Owner, error) {
		_ = svc.DisposeOwner(context.WithoutCancel(ctx), o)
		return messages.Owner{}, err
	}
	next := resumeState{Hosts: map[string]string{}}
	for i, addr := range h.Addrs {
		name := hostName(i)
		if token := st.Hosts[addr]; token != "" {
			sessions, err := remote.Get(svc).ResumeInto(ctx, o, name, token)
			switch {
			case errors.Is(err, messages.ErrOwnerNotLive):
				log.Warn().Str("host", addr).Msg("the terminals in the resume file are gone (their grace ended); starting afresh")
			case err != nil:
				return fail(fmt.Errorf("-resume-file: host %s: %w", addr, err))
			default:
				log.Info().Str("host", addr).Int("terminals", len(sessions)).Msg("terminals resumed")
			}
		}
		token, err := remote.Get(svc).ResumeToken(ctx, o, name)
		if err != nil {
			return fail(fmt.Errorf("-resume-file: host %s: %w", addr, err))
		}
		next.Hosts[addr] = token
	}
	if err := writeResumeFile(h.ResumeFile, next); err != nil {
		return fail(err)
	}
	return o, nil
}
