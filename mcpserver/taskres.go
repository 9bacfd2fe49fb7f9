package mcpserver

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/tools"
)

// Background tasks as MCP resources: each task is ptyactor://tasks/<id>,
// readable by its owner's MCP session (its status as JSON, the
// tools.TaskValue that task_output's value holds too), and the server
// sends notifications/resources/updated for it when it finishes (its send
// settled: the command ended, or the program started waiting for input),
// to the sessions that subscribed. A client that honours resource
// subscriptions stops polling task_output.
const taskURIPrefix = "ptyactor://tasks/"

func taskURI(id messages.TaskID) string { return taskURIPrefix + string(id) }

// addTaskResources registers the task resource template.
func (s *binding) addTaskResources() {
	s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: taskURIPrefix + "{id}", Name: "task", MIMEType: "application/json",
		Description: "A background terminal send started with runInBackground: its status. Subscribe to be told when it finishes.",
	}, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		snap, _, err := s.task(ctx, req.Session, req.Params.URI)
		if err != nil {
			return nil, mcp.ResourceNotFoundError(req.Params.URI)
		}
		b, _ := json.Marshal(tools.NewTaskValue(snap))
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "application/json", Text: string(b)}}}, nil
	})
}

// task resolves a task URI for the MCP session's owner; another owner's
// task is answered like an unknown one.
func (s *binding) task(ctx context.Context, ss *mcp.ServerSession, uri string) (messages.TaskSnapshot, <-chan struct{}, error) {
	id, ok := strings.CutPrefix(uri, taskURIPrefix)
	if !ok || id == "" {
		return messages.TaskSnapshot{}, nil, messages.NoTask(messages.TaskID(id))
	}
	return s.svc.TaskStatus(ctx, s.ownerFor(ctx, ss, ""), messages.TaskID(id))
}

// subscribe admits a subscription to one of the session's own tasks.
func (s *binding) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	if _, _, err := s.task(ctx, req.Session, req.Params.URI); err != nil {
		return mcp.ResourceNotFoundError(req.Params.URI)
	}
	return nil
}

// watchTask tells the task's subscribers when it finishes.
func (s *binding) watchTask(ss *mcp.ServerSession, id messages.TaskID) {
	ctx := context.Background()
	_, finished, err := s.task(ctx, ss, taskURI(id))
	if err != nil {
		return
	}
	s.wg.Go(func() {
		select {
		case <-finished:
			_ = s.mcp.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: taskURI(id)})
		case <-s.done:
		}
	})
}
