package tools

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/view"
)

// TerminalShare makes a view-only link to a session; it exists with
// Options.Sharing.
const TerminalShare = "terminal_share"

// ShareValue is terminal_share's value: the link, and until when it works.
type ShareValue struct {
	SessionID string `json:"sessionId"`
	URL       string `json:"url"`
	Label     string `json:"label"`
	ExpiresAt string `json:"expiresAt"`
}

func (t *Toolset) shareDef() Definition {
	maxTTL := int(view.MaxLinkTTL.Milliseconds())
	return Definition{
		Name:        TerminalShare,
		Description: "Make a link a person can open in a browser to watch this terminal live, read-only (they cannot type or resize). The link works for this session only, until ttlMs passes (default one hour), terminal_unshare, or the session's close.",
		InputSchema: mustJSON(object(schema{
			"sessionId": boundedStr("sessionId", sessionIDDesc),
			"label":     boundedStr("label", "Shown on the page as \"watching: <label>\": one line of text."),
			"ttlMs": schema{"type": "integer", "minimum": 1, "maximum": maxTTL, "default": view.DefaultLinkTTL.Milliseconds(),
				"description": "How long the link works, in milliseconds."},
		}, "sessionId", "label")),
		OutputSchema: mustJSON(schema{"type": "object", "properties": schema{
			"sessionId": schema{"type": "string"}, "url": schema{"type": "string"}, "label": schema{"type": "string"},
			"expiresAt": schema{"type": "string", "description": "RFC 3339"},
		}, "required": []string{"sessionId", "url", "label", "expiresAt"}}),
	}
}

// share is terminal_share: a view-only link to the caller's own session.
func (t *Toolset) share(ctx context.Context, owner messages.Owner, a args) (Result, error) {
	id, err := sessionArg(a)
	if err != nil {
		return Result{}, err
	}
	label, err := a.str("label", true)
	if err != nil {
		return Result{}, err
	}
	ttlMs, err := a.integer("ttlMs")
	if err != nil {
		return Result{}, err
	}
	var ttl time.Duration
	if ttlMs != nil {
		if *ttlMs < 1 || time.Duration(*ttlMs)*time.Millisecond > view.MaxLinkTTL {
			return Result{}, messages.InvalidArgument("ttlMs must be an integer from 1 to %d, got %d", view.MaxLinkTTL.Milliseconds(), *ttlMs)
		}
		ttl = time.Duration(*ttlMs) * time.Millisecond
	}
	// Only the session's owner may share it: Describe refuses the others.
	if _, err := t.svc.Session(owner, id).Describe(ctx); err != nil {
		return Result{}, err
	}
	link, err := t.opts.Sharing.Links.Share(owner, id, label, ttl)
	if err != nil {
		return Result{}, err
	}
	u := t.opts.Sharing.BaseURL + "/v/" + url.PathEscape(string(id)) + "#token=" + link.Token
	exp := link.Expires.UTC().Format(time.RFC3339)
	return Result{
		Text:       fmt.Sprintf("view-only link to %s (%q), until %s: %s", id, label, exp, u),
		Structured: ShareValue{SessionID: string(id), URL: u, Label: label, ExpiresAt: exp},
	}, nil
}
