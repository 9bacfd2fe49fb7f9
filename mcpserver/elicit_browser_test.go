package mcpserver

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ptyactor/ptyactor/test/testkit"
	"github.com/ptyactor/ptyactor/tools"
)

// URL elicitation end to end: the ptymcp binary over stdio with its
// console, a Go SDK client on 2025-11-25 declaring URL elicitation; its
// send at read -s asks the client to open a link, which a browser that
// never logged in to the console opens (the token alone admits); the
// person types the secret on the page, and the same call returns what the
// program did with it. The secret is in no result and not in the log;
// the link works once.
func TestElicitInBrowser(t *testing.T) {
	b := testkit.NewBrowser(t)
	cmd, stderr := binaryCmd(t, t.TempDir(), fastFlags...)
	opts, asked, completed := acceptingClient()
	c := connect(t, cmd, stderr, "elicit", opts, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	ctx := testkit.Ctx(t)
	id := c.open(obj{"name": "deploy"})
	const pw = "c0rrect-h0rse-battery"
	done := callAsync(ctx, c, tools.TerminalSend, obj{"sessionId": id, "text": `read -s -p 'pw: ' pw; echo; echo len=${#pw}`})
	el := recv(t, ctx, asked, "no elicitation")
	if el.Mode != "url" || !strings.Contains(el.URL, "/secret/"+id+"#token=") || !strings.Contains(el.Message, `"pw:"`) {
		t.Fatalf("elicitation %+v", el)
	}
	enterSecret(t, b, el.URL, "pw:", pw, "")
	r := recv(t, ctx, done, "the send did not return")
	if r.IsError || !strings.Contains(r.Text, "len="+strconv.Itoa(len(pw))) || r.S["secretEntered"] != true || r.S["secretUrl"] != nil ||
		!strings.Contains(r.Text, "A person entered the secret at the prompt.") {
		t.Fatalf("the send after the secret: %v\n%s", r.S, r.Text)
	}
	if got := recv(t, ctx, completed, "no notifications/elicitation/complete"); got != el.ElicitationID {
		t.Fatalf("completed %q, want %q", got, el.ElicitationID)
	}
	all, _ := json.Marshal(r)
	if strings.Contains(string(all), pw) || strings.Contains(string(all), "#token=") || strings.Contains(stderr.String(), pw) {
		t.Fatalf("the secret or the link leaked: %s", all)
	}
	// The link works once.
	b.Open("about:blank")
	b.Open(el.URL)
	b.WaitJS(`ptySecret.state === "refused" && ptySecret.code === "secret_link_used"`, 15*time.Second)
	withinPolicy(t, b)
}
