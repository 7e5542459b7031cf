package eino_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"
	"github.com/erradvisor/erradvisor"
	adapter "github.com/erradvisor/erradvisor/adapters/eino"
)

// overloadedOnce is a ChatModel that answers 529 overloaded once, then
// "Hello." (standing in for an eino-ext model). The body is Anthropic's, from
// https://github.com/anthropics/anthropic-sdk-typescript/issues/616.
type overloadedOnce struct{ calls int }

func (m *overloadedOnce) Generate(_ context.Context, in []*schema.Message, _ ...model.Option) (*schema.Message, error) {
	m.calls++
	if m.calls == 1 {
		return nil, errors.New(`create new message fail: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
	}
	return &schema.Message{Role: schema.Assistant, Content: "Hello.", ResponseMeta: &schema.ResponseMeta{FinishReason: "end_turn"}}, nil
}

func (m *overloadedOnce) Stream(context.Context, []*schema.Message, ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	return nil, errors.New("not streaming")
}

func (m *overloadedOnce) WithTools([]*schema.ToolInfo) (model.ToolCallingChatModel, error) {
	return m, nil
}

// Wrap a ChatModel: the overloaded call is retried after the Decision's
// delay, and the caller sees the answer.
func ExampleWrap() {
	policy := erradvisor.Conservative()
	policy.BaseDelay = 1 // a nanosecond, for the example; the default is 2 s
	m := adapter.Wrap(&overloadedOnce{}, policy,
		adapter.WithTarget("anthropic", "claude-sonnet-4-5"),
		adapter.WithDecisions(func(d erradvisor.Decision) {
			fmt.Println(d.Action, d.Cause, d.Delay)
		}),
	)
	out, err := m.Generate(context.Background(), []*schema.Message{schema.UserMessage("Say hello.")})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(out.Content)
	// Output:
	// retry retryable 1ns
	// none success 0s
	// Hello.
}

// Plug erradvisor's verdict into the ADK's own retry loop instead
// (adk.ChatModelAgentConfig.ModelRetryConfig).
func ExampleRetryConfig() {
	c := adapter.RetryConfig(erradvisor.Conservative())
	// Bodies from https://github.com/Chanzhaoyu/chatgpt-web/issues/1858 and
	// https://github.com/anthropics/anthropic-sdk-typescript/issues/616.
	quota := errors.New(`429 {"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`)
	overloaded := errors.New(`529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
	ctx := context.Background()
	fmt.Println(c.MaxRetries, c.IsRetryAble(ctx, overloaded), c.IsRetryAble(ctx, quota), c.BackoffFunc(ctx, 2))
	// Output: 3 true false 4s
}
