package wire

import (
	"fmt"
	"log/slog"
)

// Tokens are secrets: a Request carries the owner's capability token, an
// OpenOwnerReply mints it and the resume token, a ResumeOwner carries the
// resume token and its reply a new capability token. So is a person's
// secret in EnterSecret. These methods keep them out of every log line:
// fmt (%v, %s, Sprint) and slog render a redacted form; a Request renders
// no body at all. (The generated String method still prints everything;
// nothing here calls it.)

func (r *Request) Format(f fmt.State, _ rune) {
	fmt.Fprintf(f, "wire.Request{call:%d body:%T token:%s}", r.GetCall(), r.GetBody(), redacted(r.GetToken()))
}

// LogValue implements slog.LogValuer.
func (r *Request) LogValue() slog.Value { return slog.StringValue(fmt.Sprint(r)) }

func (r *Reply) Format(f fmt.State, _ rune) {
	fmt.Fprintf(f, "wire.Reply{call:%d body:%T error:%q}", r.GetCall(), r.GetBody(), r.GetError().GetMessage())
}

// LogValue implements slog.LogValuer.
func (r *Reply) LogValue() slog.Value { return slog.StringValue(fmt.Sprint(r)) }

func (r *OpenOwnerReply) Format(f fmt.State, _ rune) {
	fmt.Fprintf(f, "wire.OpenOwnerReply{token:%s resume_token:%s}", redacted(r.GetToken()), redacted(r.GetResumeToken()))
}

// LogValue implements slog.LogValuer.
func (r *OpenOwnerReply) LogValue() slog.Value { return slog.StringValue(fmt.Sprint(r)) }

func (r *ResumeOwner) Format(f fmt.State, _ rune) {
	fmt.Fprintf(f, "wire.ResumeOwner{resume_token:%s}", redacted(r.GetResumeToken()))
}

// LogValue implements slog.LogValuer.
func (r *ResumeOwner) LogValue() slog.Value { return slog.StringValue(fmt.Sprint(r)) }

func (r *ResumeOwnerReply) Format(f fmt.State, _ rune) {
	fmt.Fprintf(f, "wire.ResumeOwnerReply{token:%s sessions:%d}", redacted(r.GetToken()), len(r.GetSessions()))
}

// LogValue implements slog.LogValuer.
func (r *ResumeOwnerReply) LogValue() slog.Value { return slog.StringValue(fmt.Sprint(r)) }

func (r *EnterSecret) Format(f fmt.State, _ rune) {
	secret := `""`
	if len(r.GetSecret()) > 0 {
		secret = "[redacted]"
	}
	fmt.Fprintf(f, "wire.EnterSecret{session:%s reader:%q secret:%s}", r.GetSession(), r.GetPrompt().GetReader(), secret)
}

// LogValue implements slog.LogValuer.
func (r *EnterSecret) LogValue() slog.Value { return slog.StringValue(fmt.Sprint(r)) }

func redacted(s string) string {
	if s == "" {
		return `""`
	}
	return "[redacted]"
}
