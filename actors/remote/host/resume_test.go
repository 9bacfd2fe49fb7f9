package host_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/actors"
	"github.com/ptyactor/ptyactor/actors/remote"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// Client loss and reattach, with the client as a real process: the test
// binary re-executed as a scripted client (helperClient), which spawns on
// the host, starts a send, reports what it read, and is then killed with
// SIGKILL (or detaches its owner and exits). A new client, in this
// process, resumes the owner with the resume token the first one printed.

// clientEnv selects the scripted client in TestMain; its value is the
// script's name.
const clientEnv = "PTYACTOR_HOST_TEST_CLIENT"

// counterLines is how many lines the counter prints, one every 10 ms.
const counterLines = 300

// helperClient runs a scripted client: it connects to the host at
// $PTYACTOR_HOST_ADDR, and prints what the test needs on stdout, one fact
// per line ("key value"). It never returns.
func helperClient(script string) {
	err := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		svc, err := actors.NewService(actors.Options{Config: testkit.PTYConfig()})
		if err != nil {
			return err
		}
		if err := registerHelperHost(ctx, svc); err != nil {
			return err
		}
		if script == "fetch" {
			// Another client (its own id) asks for a record it did not close.
			_, err := rc(svc).FetchRecording(ctx, "h0", messages.SessionID(os.Getenv(fetchSessionEnv)), io.Discard)
			switch {
			case errors.Is(err, messages.ErrNoRecording):
				fmt.Println("fetch norecording")
			case err != nil:
				return err
			default:
				fmt.Println("fetch fetched")
			}
			return svc.Shutdown(ctx)
		}
		if script == "resume" {
			_, sessions, err := rc(svc).ResumeOwner(ctx, "h0", os.Getenv(resumeTokenEnv))
			switch {
			case errors.Is(err, messages.ErrOwnerNotLive):
				fmt.Println("resume notlive")
			case err != nil:
				return err
			default:
				fmt.Printf("resume sessions=%d\n", len(sessions))
			}
			return svc.Shutdown(ctx)
		}
		o, err := svc.NewOwner(ctx, "helper")
		if err != nil {
			return err
		}
		token, err := rc(svc).ResumeToken(ctx, o, "h0")
		if err != nil {
			return err
		}
		sh, err := svc.Spawn(ctx, o, messages.SpawnRequest{Host: "h0", Name: "counter"})
		if err != nil {
			return err
		}
		fmt.Printf("token %s\nsession %s\nshell %d\n", token, sh.ID(), sh.PID())
		switch script {
		case "counter", "detach":
			op, err := sh.StartSend(ctx, messages.SendRequest{
				// The blank lines scroll the counter off the 40-row screen: a
				// cursor counts lines that scrolled into the history.
				Text: fmt.Sprintf("for i in $(seq 1 %d); do echo n$i; sleep 0.01; done; echo counted; printf '\\n%%.0s' $(seq 1 45)", counterLines), Submit: true,
				// A guard, not a speed bound: 300 forks of sleep took over
				// 30 s under -race with both cores busy (test/stress.sh).
				Wait: messages.WaitPolicy{Timeout: counterGuard, NoSilence: true},
			})
			if err != nil {
				return err
			}
			fmt.Printf("ticket %d\n", op.Ticket())
			var cursor uint64
			for n := 0; ; n++ {
				page, err := sh.Read(ctx, messages.ReadRequest{Cursor: &cursor})
				if err != nil {
					return err
				}
				nums, next := counted(page, cursor)
				// One write per read: the test sees a read whole or not at all.
				fmt.Printf("read %d %d %s\n", cursor, next, strings.Join(nums, ","))
				cursor = next
				if script == "detach" && n >= 20 && len(nums) > 0 {
					if err := rc(svc).DetachOwner(ctx, o); err != nil {
						return err
					}
					fmt.Println("detached yes")
					return svc.Shutdown(ctx)
				}
				time.Sleep(20 * time.Millisecond) // the read cadence of a polling client
			}
		case "sleeper":
			res, err := sh.Send(ctx, messages.SendRequest{Text: "sleep 1000 & echo bg=$!", Submit: true})
			if err != nil {
				return err
			}
			m := regexp.MustCompile(`bg=(\d+)`).FindStringSubmatch(res.Viewport)
			if m == nil {
				return fmt.Errorf("no bg pid in %q", res.Viewport)
			}
			if _, err := sh.StartSend(ctx, messages.SendRequest{Text: "sleep 999", Submit: true}); err != nil {
				return err
			}
			fmt.Printf("bg %s\nready yes\n", m[1])
			<-ctx.Done() // until killed
			return ctx.Err()
		}
		return fmt.Errorf("unknown script %q", script)
	}()
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// Environment of a scripted client: the resume token of script "resume",
// and its mutual TLS ("cert-file|key-file|ca-file"; insecure without).
const (
	resumeTokenEnv = "PTYACTOR_HOST_TEST_RESUME_TOKEN"
	clientTLSEnv   = "PTYACTOR_HOST_TEST_TLS"
)

// registerHelperHost registers the host at $PTYACTOR_HOST_ADDR as h0,
// with the client certificate $PTYACTOR_HOST_TEST_TLS names, if any.
func registerHelperHost(ctx context.Context, svc *actors.Service) error {
	addr := os.Getenv("PTYACTOR_HOST_ADDR")
	files := os.Getenv(clientTLSEnv)
	if files == "" {
		return rc(svc).RegisterHost(ctx, "h0", addr, nil, remote.HostInsecure())
	}
	pair, pool, err := tlsFiles(files)
	if err != nil {
		return fmt.Errorf("%s: %w", clientTLSEnv, err)
	}
	return rc(svc).RegisterHost(ctx, "h0", addr, &tls.Config{Certificates: []tls.Certificate{pair}, RootCAs: pool})
}

// counted returns the counter values among the final lines a cursor read
// returned, and the cursor to read on from. The unfinished last line is
// left for the next read.
func counted(page messages.ReadResult, from uint64) (nums []string, next uint64) {
	final := int(page.Cursor - from - (page.OmittedTo - page.OmittedFrom))
	lines := strings.Split(page.Text, "\n")
	for i := 0; i < final && i < len(lines); i++ {
		if l := strings.TrimRight(lines[i], "\r"); len(l) > 1 && l[0] == 'n' {
			if _, err := strconv.Atoi(l[1:]); err == nil {
				nums = append(nums, l[1:])
			}
		}
	}
	return nums, page.Cursor
}

// clientProc is a running scripted client.
type clientProc struct {
	cmd    *exec.Cmd
	stderr *lockedBuffer
	mu     sync.Mutex
	facts  map[string]string
	reads  [][2]string // "from next" and the numbers, in order
	lines  chan string
	done   chan struct{}
}

func startClient(t *testing.T, h *testkit.Host, script string, env ...string) *clientProc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), clientEnv+"="+script, "PTYACTOR_HOST_ADDR="+h.Addr()), env...)
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &clientProc{cmd: cmd, stderr: stderr, facts: map[string]string{}, lines: make(chan string, 1024), done: make(chan struct{})}
	go func() {
		defer close(c.done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			k, v, _ := strings.Cut(sc.Text(), " ")
			c.mu.Lock()
			if k == "read" {
				f := strings.Fields(v)
				nums := ""
				if len(f) == 3 {
					nums = f[2]
				}
				if len(f) >= 2 {
					c.reads = append(c.reads, [2]string{f[0] + " " + f[1], nums})
				}
			} else {
				c.facts[k] = v
			}
			c.mu.Unlock()
		}
		_, _ = io.Copy(io.Discard, out)
		_ = cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-c.done
	})
	return c
}

func (c *clientProc) fact(k string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.facts[k]
}

// waitFact waits for the client to print k, failing on its error.
func (c *clientProc) waitFact(t *testing.T, k string) string {
	t.Helper()
	var v string
	deadline := time.Now().Add(30 * time.Second)
	testkit.WaitFor(t, time.Minute, "the client's "+k, func() bool {
		if e := c.fact("error"); e != "" || time.Now().After(deadline) {
			t.Fatalf("client failed to print %s (error: %s); its stderr:\n%s", k, e, c.stderr)
		}
		v = c.fact(k)
		return v != ""
	})
	return v
}

// numbers returns the counter values the client read, and its last cursor.
func (c *clientProc) numbers() (nums []int, cursor uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range c.reads {
		f := strings.Fields(r[0])
		cursor, _ = strconv.ParseUint(f[1], 10, 64)
		for _, s := range strings.Split(r[1], ",") {
			if n, err := strconv.Atoi(s); err == nil {
				nums = append(nums, n)
			}
		}
	}
	return nums, cursor
}

func (c *clientProc) kill9(t *testing.T) {
	t.Helper()
	if err := c.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-c.done
}

// counterGuard bounds the counter's send and the wait for it.
const counterGuard = 3 * time.Minute

// checkCounter fails unless nums is 1..counterLines, each once, in order.
func checkCounter(t *testing.T, nums []int) {
	t.Helper()
	for i, n := range nums {
		if n != i+1 {
			t.Fatalf("counter: at %d got %d, want %d (a gap or a duplicate); all: %v", i, n, i+1, nums)
		}
	}
	if len(nums) != counterLines {
		t.Fatalf("counter: %d lines, want %d", len(nums), counterLines)
	}
}

// resumeAndRead resumes the owner and reads the counter on from cursor
// until its send settled; it returns the resumed session and the values.
func resumeAndRead(t *testing.T, svc *actors.Service, token string, wantID messages.SessionID, cursor uint64) (remote.ResumedSession, []int) {
	t.Helper()
	ctx := testkit.Ctx(t)
	o, sessions, err := rc(svc).ResumeOwner(ctx, "h0", token)
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	if len(sessions) != 1 || sessions[0].ID() != wantID || sessions[0].Info().Name != "counter" {
		t.Fatalf("resumed %+v, want the one session %s", sessions, wantID)
	}
	rs := sessions[0]
	if rs.Owner() != o || rs.Latest == nil {
		t.Fatalf("resumed session without its send: %+v", rs)
	}
	var nums []int
	read := func() {
		page, err := rs.Read(ctx, messages.ReadRequest{Cursor: &cursor})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		got, cursor = counted(page, cursor)
		for _, s := range got {
			n, _ := strconv.Atoi(s)
			nums = append(nums, n)
		}
	}
	testkit.WaitFor(t, counterGuard, "the counter's send to settle", func() bool {
		read()
		select {
		case <-rs.Latest.Done():
			return true
		default:
			return false
		}
	})
	read() // what the settlement's last read may have left
	return rs, nums
}

// kill -9 of the client mid-send; a new client resumes the owner within
// the grace: the same session id, the send's result, and the counter read
// on by cursor with no line lost or repeated.
func TestClientKilledThenResumed(t *testing.T) {
	if isolate(t) {
		return
	}
	h := startHost(t, "-client-grace", "1m")
	c := startClient(t, h, "counter")
	token, id := c.waitFact(t, "token"), messages.SessionID(c.waitFact(t, "session"))
	testkit.WaitFor(t, 30*time.Second, "the client to read part of the counter", func() bool {
		nums, _ := c.numbers()
		return len(nums) >= 30 || c.fact("error") != ""
	})
	c.kill9(t)
	before, cursor := c.numbers()
	if len(before) >= counterLines {
		t.Fatalf("the counter ended before the client was killed: %d lines", len(before))
	}
	if strings.Contains(h.Stderr(), token) {
		t.Fatal("the host logged a resume token")
	}

	svc, _ := newClient(t, h)
	rs, after := resumeAndRead(t, svc, token, id, cursor)
	t.Logf("killed after %d lines (cursor %d); read %d after the resume", len(before), cursor, len(after))
	checkCounter(t, append(before, after...))
	res, err := rs.Latest.Result(testkit.Ctx(t))
	if err != nil || res.ExitCode == nil || *res.ExitCode != 0 || !strings.Contains(res.Viewport, "counted") {
		t.Fatalf("the in-flight send's result: %+v %v", res, err)
	}
	// The session is the resumed owner's now: sends work, and the old
	// token is gone with the old client.
	if r, err := rs.Send(testkit.Ctx(t), messages.SendRequest{Text: "echo again", Submit: true}); err != nil || !strings.Contains(r.Viewport, "again") {
		t.Fatalf("send after resume: %+v %v", r, err)
	}
	if _, _, err := rc(svc).ResumeOwner(testkit.Ctx(t), "h0", "not-a-token"); !errors.Is(err, messages.ErrOwnerNotLive) {
		t.Fatalf("resume with a wrong token: %v", err)
	}
	pid := rs.PID()
	if _, err := rs.Close(testkit.Ctx(t), "done"); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("shell %d survived its close (%v)", pid, err)
	}
}

// A client that detaches its owner (a clean end that keeps the sessions)
// and exits; the next client resumes them.
func TestClientDetachesThenResumed(t *testing.T) {
	if isolate(t) {
		return
	}
	h := startHost(t, "-client-grace", "1m")
	c := startClient(t, h, "detach")
	token, id := c.waitFact(t, "token"), messages.SessionID(c.waitFact(t, "session"))
	select {
	case <-c.done:
	case <-time.After(60 * time.Second):
		t.Fatal("the detaching client did not exit")
	}
	if c.fact("detached") == "" {
		t.Fatalf("the client did not detach: %s\n%s", c.fact("error"), c.stderr)
	}
	before, cursor := c.numbers()
	svc, _ := newClient(t, h)
	rs, after := resumeAndRead(t, svc, token, id, cursor)
	checkCounter(t, append(before, after...))
	if res, err := rs.Latest.Result(testkit.Ctx(t)); err != nil || *res.ExitCode != 0 {
		t.Fatalf("the in-flight send's result: %+v %v", res, err)
	}
}

// After the grace, a lost client's sessions are disposed with the same
// teardown as a close (the shell and a background job are gone), and its
// resume token no longer works.
func TestClientGraceExpiry(t *testing.T) {
	if isolate(t) {
		return
	}
	h := startHost(t, "-client-grace", "500ms")
	c := startClient(t, h, "sleeper")
	token := c.waitFact(t, "token")
	c.waitFact(t, "ready")
	shell, _ := strconv.Atoi(c.fact("shell"))
	bg, _ := strconv.Atoi(c.fact("bg"))
	if shell == 0 || bg == 0 {
		t.Fatalf("client facts: shell %q bg %q", c.fact("shell"), c.fact("bg"))
	}
	c.kill9(t)
	killedAt := time.Now()
	testkit.WaitFor(t, 20*time.Second, "the lost client's processes to be torn down", func() bool {
		return syscall.Kill(shell, 0) == syscall.ESRCH && syscall.Kill(bg, 0) == syscall.ESRCH
	})
	t.Logf("client killed → its tree gone in %v", time.Since(killedAt).Round(time.Millisecond))
	svc, _ := newClient(t, h)
	if _, _, err := rc(svc).ResumeOwner(testkit.Ctx(t), "h0", token); !errors.Is(err, messages.ErrOwnerNotLive) {
		t.Fatalf("resume after the grace: %v", err)
	}
}

// Over mutual TLS, an owner is bound to the certificate of the client that
// opened it: a client with another certificate from the same CA that
// presents the owner's resume token is answered as for a wrong token (the
// owner is not live), and the owner's sessions are untouched; a client
// with the first certificate resumes them.
func TestResumeBoundToCertificate(t *testing.T) {
	if isolate(t) {
		return
	}
	dir := t.TempDir()
	ca := newCA(t, "ptyactor test CA")
	hostCert, certA, certB := ca.issue(t, dir, "host"), ca.issue(t, dir, "client-a"), ca.issue(t, dir, "client-b")
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, ca.pem, 0o600); err != nil {
		t.Fatal(err)
	}
	h := startHostTLS(t, "-listen", "127.0.0.1:0", "-client-grace", "1m",
		"-tls-cert", hostCert.certFile, "-tls-key", hostCert.keyFile, "-tls-ca", caFile)
	tlsEnv := func(c issued) string { return clientTLSEnv + "=" + c.certFile + "|" + c.keyFile + "|" + caFile }

	a := startClient(t, h, "detach", tlsEnv(certA))
	token, id := a.waitFact(t, "token"), messages.SessionID(a.waitFact(t, "session"))
	select {
	case <-a.done:
	case <-time.After(60 * time.Second):
		t.Fatal("the detaching client did not exit")
	}
	if a.fact("detached") == "" {
		t.Fatalf("the client did not detach: %s\n%s", a.fact("error"), a.stderr)
	}
	before, cursor := a.numbers()

	b := startClient(t, h, "resume", tlsEnv(certB), resumeTokenEnv+"="+token)
	if got := b.waitFact(t, "resume"); got != "notlive" {
		t.Fatalf("a client with another certificate resumed the owner: %s", got)
	}

	good := &tls.Config{Certificates: []tls.Certificate{certA.pair}, RootCAs: ca.pool}
	svc, _ := newClientWith(t, func(svc *actors.Service) error {
		return rc(svc).RegisterHost(testkit.Ctx(t), "h0", h.Addr(), good)
	})
	rs, after := resumeAndRead(t, svc, token, id, cursor)
	checkCounter(t, append(before, after...))
	if res, err := rs.Latest.Result(testkit.Ctx(t)); err != nil || res.ExitCode == nil || *res.ExitCode != 0 {
		t.Fatalf("the in-flight send's result: %+v %v", res, err)
	}
	if strings.Contains(h.Stderr(), token) {
		t.Fatal("the host logged a resume token")
	}
}

// A wait on a resumed session follows the send the killed client left in
// flight: one that ends first says timeout (not SEND_ACTIVE), a cancelled
// one ends without interrupting the send, and once the send settled the
// next wait returns its result; the one after waits anew.
func TestResumedWaitFollowsTheAdoptedSend(t *testing.T) {
	if isolate(t) {
		return
	}
	h := startHost(t, "-client-grace", "1m")
	c := startClient(t, h, "sleeper")
	token := c.waitFact(t, "token")
	c.waitFact(t, "ready")
	c.kill9(t)

	svc, _ := newClient(t, h)
	ctx := testkit.Ctx(t)
	_, sessions, err := rc(svc).ResumeOwner(ctx, "h0", token)
	if err != nil || len(sessions) != 1 || sessions[0].Latest == nil {
		t.Fatalf("resume: %+v %v", sessions, err)
	}
	rs := sessions[0]
	res, err := rs.Wait(ctx, messages.WaitPolicy{Timeout: 200 * time.Millisecond})
	if err != nil || res.WaitReason != messages.WaitTimeout || res.Cause != messages.CauseDeadline {
		t.Fatalf("a wait shorter than the send: %+v %v", res, err)
	}
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if _, err := rs.Wait(short, messages.WaitPolicy{Timeout: time.Minute}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a cancelled wait: %v", err)
	}
	if res, err := rs.Wait(ctx, messages.WaitPolicy{Timeout: 200 * time.Millisecond}); err != nil || res.WaitReason != messages.WaitTimeout {
		t.Fatalf("the send after a cancelled wait: %+v %v", res, err)
	}

	if _, err := rs.Signal(ctx, messages.SIGINT); err != nil {
		t.Fatal(err)
	}
	if _, err := rs.Latest.Result(ctx); err != nil {
		t.Fatalf("the adopted send: %v", err)
	}
	res, err = rs.Wait(ctx, messages.WaitPolicy{Timeout: 10 * time.Second})
	// The send's output: its input echoed ("sleep 999"), then the prompt.
	if err != nil || res.Cause != messages.CausePrompt || res.ExitCode == nil || *res.ExitCode != 130 || !strings.Contains(res.Viewport, "sleep 999") {
		t.Fatalf("the wait after the send settled: %+v %v", res, err)
	}
	res, err = rs.Wait(ctx, messages.WaitPolicy{Timeout: 200 * time.Millisecond, NoSilence: true})
	if err != nil || strings.Contains(res.Viewport, "sleep 999") {
		t.Fatalf("the wait after that: %+v %v", res, err)
	}
}
