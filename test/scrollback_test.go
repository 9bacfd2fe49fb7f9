package test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/ptyactor/ptyactor/backend/local"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// Item 6: retained scrollback is bounded in lines and in bytes, and paging
// follows REFERENCE §c.
func TestScrollbackBounds(t *testing.T) {
	t.Run("lines", func(t *testing.T) {
		cfg := testkit.PTYConfig() // ScrollbackLines 100
		h := newHarness(t, cfg, local.Options{})
		id := h.spawn(messages.SpawnRequest{}).ID()
		h.prompt(id, "seq 1 1000", 0)
		page, err := h.svc.Session(h.owner, id).Read(testkit.Ctx(t), messages.ReadRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if page.TotalLines > cfg.ScrollbackLines || page.TotalLines < cfg.ScrollbackLines/2 {
			t.Fatalf("TotalLines %d, want at most %d (and most of them kept)", page.TotalLines, cfg.ScrollbackLines)
		}
		if !page.Truncated {
			t.Fatal("lost history is not reported as truncated")
		}
		ls := lines(page.Text)
		if len(ls) != page.TotalLines || page.LineBegin != 0 || page.LineEnd != page.TotalLines {
			t.Fatalf("page of %d lines [%d,%d), total %d", len(ls), page.LineBegin, page.LineEnd, page.TotalLines)
		}
		if ls[len(ls)-1] != local.PromptText || ls[len(ls)-2] != "1000" {
			t.Fatalf("newest lines %q, want 1000 then the prompt", ls[len(ls)-2:])
		}
		// The retained lines are the newest ones, in order.
		for i := 0; i < len(ls)-1; i++ {
			if ls[i] != strconv.Itoa(1000-(len(ls)-2-i)) {
				t.Fatalf("line %d is %q, want %d", i, ls[i], 1000-(len(ls)-2-i))
			}
		}
	})

	t.Run("bytes", func(t *testing.T) {
		cfg := testkit.PTYConfig()
		cfg.ScrollbackMaxBytes = 32768
		cfg.MaxReadBytes = 32768
		h := newHarness(t, cfg, local.Options{})
		id := h.spawn(messages.SpawnRequest{}).ID()
		res := h.prompt(id, `head -c 100000 /dev/zero | tr '\0' x; echo`, 0)
		if len(res.Viewport) > cfg.MaxReadBytes || !res.Truncated {
			t.Fatalf("send viewport %d bytes truncated=%v, want at most %d and truncated", len(res.Viewport), res.Truncated, cfg.MaxReadBytes)
		}
		ctx := testkit.Ctx(t)
		page, err := h.svc.Session(h.owner, id).Read(ctx, messages.ReadRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Text) > cfg.ScrollbackMaxBytes || len(page.Text) < cfg.ScrollbackMaxBytes/2 {
			t.Fatalf("read %d bytes, want at most %d (and most of them kept)", len(page.Text), cfg.ScrollbackMaxBytes)
		}
		if !page.Truncated || !strings.HasSuffix(page.Text, strings.Repeat("x", 1000)+"\n"+local.PromptText) {
			t.Fatalf("truncated=%v, tail %q", page.Truncated, page.Text[max(0, len(page.Text)-40):])
		}
		// Line by line, the retained bytes stay within the cap too: a page
		// is cut to maxReadBytes, but the sum shows what is retained.
		retained := 0
		for off := 0; off < page.TotalLines; off++ {
			p, err := h.svc.Session(h.owner, id).Read(ctx, messages.ReadRequest{Offset: intp(off), Count: intp(1)})
			if err != nil {
				t.Fatal(err)
			}
			retained += len(p.Text)
			if off > 0 {
				retained++ // the line break
			}
		}
		if retained > cfg.ScrollbackMaxBytes {
			t.Fatalf("scrollback retains %d bytes, over the cap %d", retained, cfg.ScrollbackMaxBytes)
		}
	})

	t.Run("paging", func(t *testing.T) {
		h := newHarness(t, testkit.PTYConfig(), local.Options{})
		id := h.spawn(messages.SpawnRequest{}).ID()
		h.prompt(id, "seq 1 50", 0)
		ctx := testkit.Ctx(t)
		page, err := h.svc.Session(h.owner, id).Read(ctx, messages.ReadRequest{Offset: intp(1), Count: intp(3)})
		if err != nil {
			t.Fatal(err)
		}
		if page.Text != "48\n49\n50" || page.LineBegin != 1 || page.LineEnd != 4 || page.Truncated {
			t.Fatalf("page offset 1 count 3: %+v", page)
		}
		total := page.TotalLines
		for _, off := range []int{total, total + 7} {
			p, err := h.svc.Session(h.owner, id).Read(ctx, messages.ReadRequest{Offset: intp(off)})
			if err != nil {
				t.Fatalf("offset %d: %v", off, err)
			}
			if p.Text != "" || p.LineBegin != off || p.LineEnd != off || p.TotalLines != total {
				t.Fatalf("offset %d beyond the end: %+v", off, p)
			}
		}
		for _, req := range []messages.ReadRequest{
			{Offset: intp(-1)},
			{Count: intp(0)},
			{Count: intp(-5)},
			{Offset: intp(-1), Count: intp(0)},
		} {
			if _, err := h.svc.Session(h.owner, id).Read(ctx, req); !errors.Is(err, messages.ErrInvalidArgument) {
				t.Fatalf("Read(offset=%s count=%s): %v, want ErrInvalidArgument", codeString(req.Offset), codeString(req.Count), err)
			}
		}
	})
}
