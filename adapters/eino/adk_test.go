package eino_test

import (
	"context"
	"errors"
	"testing"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/schema"
	"github.com/erradvisor/erradvisor"
	adapter "github.com/erradvisor/erradvisor/adapters/eino"
	"github.com/google/go-cmp/cmp"
)

// insufficientQuota is OpenAI's 429 body for an exhausted quota, from
// https://github.com/Chanzhaoyu/chatgpt-web/issues/1858 (its whitespace
// removed; a fixture of the core module, testdata/fixtures/openai.yaml).
const insufficientQuota = `{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`

// runAgent runs a ChatModelAgent on "hello" and returns the answer's text,
// or the error the run ended with.
func runAgent(t *testing.T, cfg *adk.ChatModelAgentConfig) (string, error) {
	t.Helper()
	ctx := context.Background()
	cfg.Name, cfg.Description, cfg.Instruction = "assistant", "answers briefly", "be brief"
	agent, err := adk.NewChatModelAgent(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	events := adk.NewRunner(ctx, adk.RunnerConfig{Agent: agent}).Query(ctx, "hello")
	var text string
	for {
		ev, ok := events.Next()
		if !ok {
			return text, nil
		}
		if ev.Err != nil {
			return "", ev.Err
		}
		if ev.Output != nil && ev.Output.MessageOutput != nil {
			msg, err := ev.Output.MessageOutput.GetMessage()
			if err != nil {
				return "", err
			}
			text = msg.Content
		}
	}
}

// RetryConfig inside the ADK's own retry loop: a transient failure is
// retried, a quota is not.
func TestRetryConfigInChatModelAgent(t *testing.T) {
	p := fast()
	tests := []struct {
		name      string
		script    []step
		want      string
		wantQuota bool
		calls     int
	}{{
		name:   "overloaded, then an answer",
		script: []step{{err: claudeErr(529, bodyOverloaded)}, {out: answer("hi", "end_turn")}},
		want:   "hi",
		calls:  2,
	}, {
		name:      "insufficient quota: not retried",
		script:    []step{{err: claudeErr(429, insufficientQuota)}, {out: answer("never", "end_turn")}},
		wantQuota: true,
		calls:     1,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fm := &fakeModel{script: tt.script}
			got, err := runAgent(t, &adk.ChatModelAgentConfig{Model: fm, ModelRetryConfig: adapter.RetryConfig(p)})
			if tt.wantQuota {
				if err == nil || erradvisor.ClassifyError(err).Class != erradvisor.Quota {
					t.Errorf("got %v, want the quota error", err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
			if got := len(fm.roles()); got != tt.calls {
				t.Errorf("got %d calls, want %d", got, tt.calls)
			}
		})
	}
}

// Wrap as the model of a ChatModelAgent: an overflow is compacted and the
// request made again, inside the agent's run.
func TestWrapInChatModelAgent(t *testing.T) {
	fm := &fakeModel{script: []step{{err: claudeErr(400, bodyPromptTooLong)}, {out: answer("short now", "end_turn")}}}
	compacted := 0
	m := adapter.Wrap(fm, fast(), adapter.WithTarget("anthropic", "claude-sonnet-4-5"), adapter.WithFailure(failure),
		adapter.WithCompactor(func(_ context.Context, in []*schema.Message) ([]*schema.Message, error) {
			compacted++
			return in[len(in)-1:], nil
		}))
	got, err := runAgent(t, &adk.ChatModelAgentConfig{Model: m})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]any{"short now", 1, 2}, []any{got, compacted, len(fm.roles())}); diff != "" {
		t.Errorf("answer, compactions, calls (-want +got):\n%s", diff)
	}
	var e *erradvisor.Error
	if errors.As(err, &e) {
		t.Errorf("unexpected verdict %v", e)
	}
}
