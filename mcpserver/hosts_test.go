package mcpserver

import (
	"os"
	"path/filepath"
	"testing"

	linux "github.com/ptyactor/ptyactor/probes/linux"
	"github.com/ptyactor/ptyactor/record"
	"github.com/ptyactor/ptyactor/tools"
)

// ptymcp -host serves MCP clients with terminals on a real ptyhost: the
// same tools and results, and the shell is the host's child.
func TestHostTerminals(t *testing.T) {
	// python3's start may outlast the host's default silence tier (3 s) on
	// a loaded machine; only the exact tier may settle it here.
	host := startPtyhost(t, "-idle-silence-ms", "30000")
	c, _, _ := stdioServer(t, "-host", host.Addr(), "-host-insecure")
	open := c.call(tools.TerminalOpen, obj{})
	id, pid := open.S["sessionId"].(string), int(open.S["pid"].(float64))
	if st, err := linux.ReadStat(linux.FS{}, pid); err != nil || st.PPID != host.Pid() {
		t.Fatalf("shell %d: %+v %v, want the host's (%d) child", pid, st, err, host.Pid())
	}
	r := c.call(tools.TerminalSend, obj{"sessionId": id, "text": "python3 -q"})
	if r.S["reader"] != "python3" || r.S["cause"] != "input" {
		t.Fatalf("python3 on the host: %+v", r.S)
	}
	r = c.call(tools.TerminalSend, obj{"sessionId": id, "text": "exit()"})
	if r.S["exitCode"] != float64(0) {
		t.Fatalf("exit(): %+v", r.S)
	}
	r = c.call(tools.TerminalClose, obj{"sessionId": id})
	if r.S["outcome"] != "closed" {
		t.Fatalf("close: %+v", r.S)
	}
}

// ptymcp -host with its own record folder: terminal_close fetches the
// host's record into it, under the same name, and answers with the local
// copy's path (hostPath: the host's), which verifies to the hash the close
// reported.
func TestHostRecordFetchedOnClose(t *testing.T) {
	hostDir := filepath.Join(t.TempDir(), "host-records")
	localDir := filepath.Join(t.TempDir(), "records")
	host := startPtyhost(t, "-idle-silence-ms", "30000", "-record-dir", hostDir)
	c, _, _ := stdioServer(t, "-host", host.Addr(), "-host-insecure", "-record-dir", localDir)
	id := c.call(tools.TerminalOpen, obj{}).str("sessionId")
	c.call(tools.TerminalMark, obj{"sessionId": id, "label": "on the host"})
	c.call(tools.TerminalSend, obj{"sessionId": id, "text": "echo recorded"})
	r := c.call(tools.TerminalClose, obj{"sessionId": id})
	rec, _ := r.S["recording"].(map[string]any)
	path, _ := rec["path"].(string)
	hostPath, _ := rec["hostPath"].(string)
	if rec == nil || rec["fetchError"] != nil || filepath.Dir(path) != localDir || filepath.Dir(hostPath) != hostDir || filepath.Base(path) != filepath.Base(hostPath) {
		t.Fatalf("recording: %+v; want a copy in %s of the host's file in %s", rec, localDir, hostDir)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("the copy: %v, %v; want mode 0600", st, err)
	}
	vr, err := record.VerifyFile(path, nil)
	if err != nil || !vr.Closed || vr.Last != rec["sha256"] || float64(vr.Records) != rec["records"] {
		t.Fatalf("verify the copy: %+v, %v; the close reported %+v", vr, err, rec)
	}
	local, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if remote, err := os.ReadFile(hostPath); err != nil || string(remote) != string(local) {
		t.Fatalf("the copy differs from the host's file (%v)", err)
	}
	if ents, _ := os.ReadDir(localDir); len(ents) != 1 {
		t.Fatalf("the local folder holds %d files, want the copy alone", len(ents))
	}
}
