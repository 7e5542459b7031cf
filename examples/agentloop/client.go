package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/erradvisor/erradvisor"
)

// This file is the host's transport: a minimal Messages client that sends a
// streaming request and turns the response into either a finished turn or an
// erradvisor.Failure carrying everything the classifier can use (status,
// error type, body, headers, Go error). It has no retries of its own: the
// request loop decides.

// wireRequest is the JSON body of POST /v1/messages.
type wireRequest struct {
	Model     string        `json:"model"`
	MaxTokens int           `json:"max_tokens"`
	Stream    bool          `json:"stream"`
	Messages  []wireMessage `json:"messages"`
}

type wireMessage struct {
	Role    string      `json:"role"` // "user" or "assistant"
	Content []wireBlock `json:"content"`
}

type wireBlock struct {
	Type string `json:"type"` // "text"
	Text string `json:"text"`
}

// turn is a response that streamed to its end.
type turn struct {
	Text, Thinking string
	ToolCalls      int
	StopReason     string // "end_turn", "max_tokens", "tool_use", ...
	InputTokens    int
	OutputTokens   int
}

type client struct {
	baseURL string
	apiKey  string
	http    *http.Client
}

// send makes one request. Exactly one of the results is non-nil.
func (c *client) send(ctx context.Context, req wireRequest) (*turn, *erradvisor.Failure) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, &erradvisor.Failure{Message: err.Error(), Err: err}
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, c.baseURL+"/v1/messages", bytes.NewReader(body))
	if err != nil {
		return nil, &erradvisor.Failure{Message: err.Error(), Err: err}
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("x-api-key", c.apiKey)
	hr.Header.Set("anthropic-version", "2023-06-01")

	resp, err := c.http.Do(hr)
	if err != nil {
		// Network faults and cancellations: the classifier reads the Go
		// error chain (context.Canceled, ECONNRESET, timeouts, ...).
		return nil, &erradvisor.Failure{Message: err.Error(), Err: err}
	}
	defer resp.Body.Close()

	if resp.StatusCode != http.StatusOK {
		raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return nil, &erradvisor.Failure{
			Status:  resp.StatusCode,
			Code:    errorType(raw),
			Message: fmt.Sprintf("%d %s", resp.StatusCode, bytes.TrimSpace(raw)),
			Header:  resp.Header,
			Err:     err,
		}
	}
	return readStream(resp.Body)
}

// readStream assembles a turn from the event stream. An error event inside
// the 200 stream is a Failure with no status; a stream that ends before
// message_stop is a Failure wrapping io.ErrUnexpectedEOF.
func readStream(r io.Reader) (*turn, *erradvisor.Failure) {
	var t turn
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	var event, data string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event:"):
			event = strings.TrimSpace(line[len("event:"):])
			continue
		case strings.HasPrefix(line, "data:"):
			data = strings.TrimSpace(line[len("data:"):])
			continue
		case line != "":
			continue
		}
		// A blank line dispatches the event.
		switch event {
		case "error":
			return nil, &erradvisor.Failure{Code: errorType([]byte(data)), Message: data}
		case "message_stop":
			return &t, nil
		default:
			apply(&t, data)
		}
		event, data = "", ""
	}
	err := sc.Err()
	if err == nil {
		err = io.ErrUnexpectedEOF
	}
	return nil, &erradvisor.Failure{Message: "stream ended before message_stop: " + err.Error(), Err: err}
}

// streamEvent is the union of the stream events the client reads.
type streamEvent struct {
	Type    string `json:"type"`
	Message struct {
		Usage struct {
			InputTokens int `json:"input_tokens"`
		} `json:"usage"`
	} `json:"message"`
	ContentBlock struct {
		Type string `json:"type"`
	} `json:"content_block"`
	Delta struct {
		Type       string `json:"type"`
		Text       string `json:"text"`
		Thinking   string `json:"thinking"`
		StopReason string `json:"stop_reason"`
	} `json:"delta"`
	Usage struct {
		OutputTokens int `json:"output_tokens"`
	} `json:"usage"`
}

func apply(t *turn, data string) {
	var e streamEvent
	if json.Unmarshal([]byte(data), &e) != nil {
		return
	}
	switch e.Type {
	case "message_start":
		t.InputTokens = e.Message.Usage.InputTokens
	case "content_block_start":
		if e.ContentBlock.Type == "tool_use" {
			t.ToolCalls++
		}
	case "content_block_delta":
		t.Text += e.Delta.Text
		t.Thinking += e.Delta.Thinking
	case "message_delta":
		t.StopReason = e.Delta.StopReason
		t.OutputTokens = e.Usage.OutputTokens
	}
}

// errorType returns error.type of an Anthropic error body, or "".
func errorType(body []byte) string {
	var v struct {
		Error struct {
			Type string `json:"type"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &v) != nil {
		return ""
	}
	return v.Error.Type
}
