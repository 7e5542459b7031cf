package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// This file is the fake Anthropic API the program starts on 127.0.0.1: it
// answers POST /s/{scenario}/v1/messages from a script, one reply per
// request, with the API's real error bodies and headers, and records what
// it received.

// reply is one scripted response: an error (status and JSON body) or a
// message.
type reply struct {
	status int               // HTTP status
	header map[string]string // extra response headers
	body   string            // the response body, JSON
}

// received is what the server saw of one request.
type received struct {
	// Messages is the number of messages in the request.
	Messages int
	// Text is the text of the request's last message, where the notes go.
	Text string
	// RetryCount is the SDK's x-stainless-retry-count header: "0" for a
	// first attempt, more when the SDK retried on its own.
	RetryCount string
}

type fakeAPI struct {
	srv  *http.Server
	addr string

	mu      sync.Mutex
	scripts map[string][]reply
	seen    map[string][]received
}

// startFakeAPI listens on a free port of 127.0.0.1 and serves the fake API.
func startFakeAPI() (*fakeAPI, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	a := &fakeAPI{addr: l.Addr().String(), scripts: map[string][]reply{}, seen: map[string][]received{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /s/{id}/v1/messages", a.messages)
	a.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go a.srv.Serve(l)
	return a, nil
}

// Close stops the server.
func (a *fakeAPI) Close() error { return a.srv.Close() }

// load installs the script of scenario id and returns the base URL for the
// SDK's option.WithBaseURL.
func (a *fakeAPI) load(id string, script []reply) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.scripts[id] = script
	return "http://" + a.addr + "/s/" + id + "/"
}

// requests returns what scenario id received, in order.
func (a *fakeAPI) requests(id string) []received {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]received(nil), a.seen[id]...)
}

func (a *fakeAPI) messages(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Messages []struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"messages"`
	}
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, &req); err != nil {
		writeJSON(w, http.StatusBadRequest, nil, `{"type":"error","error":{"type":"invalid_request_error","message":"invalid JSON body"}}`)
		return
	}
	rec := received{Messages: len(req.Messages), RetryCount: r.Header.Get("X-Stainless-Retry-Count")}
	if n := len(req.Messages); n > 0 {
		for _, c := range req.Messages[n-1].Content {
			rec.Text += c.Text + "\n"
		}
	}
	id := r.PathValue("id")
	a.mu.Lock()
	a.seen[id] = append(a.seen[id], rec)
	next := reply{status: 500, body: `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`}
	if s := a.scripts[id]; len(s) > 0 {
		next, a.scripts[id] = s[0], s[1:]
	}
	a.mu.Unlock()
	writeJSON(w, next.status, next.header, next.body)
}

func writeJSON(w http.ResponseWriter, status int, header map[string]string, body string) {
	for k, v := range header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Request-Id", "req_011CVjxiYzEFcAQC4Fk87zw2")
	w.WriteHeader(status)
	io.WriteString(w, body)
}

// Real Anthropic error bodies, each from the source beside it.
const (
	// https://github.com/anthropics/anthropic-sdk-typescript/issues/616
	overloadedBody = `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`
	// https://github.com/earendil-works/pi/issues/102
	promptTooLongBody = `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 219898 tokens > 200000 maximum"},"request_id":"req_011CVjxiYzEFcAQC4Fk87zw2"}`
	// https://github.com/OpenHands/OpenHands/issues/9259
	rateLimitBody = `{"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed the rate limit for your organization (0dccdde6-f924-4f1b-bb3b-92ef846e0a5b) of 20,000 input tokens per minute. For details, refer to: https://docs.anthropic.com/en/api/rate-limits. You can see the response headers for current usage. Please reduce the prompt length or the maximum tokens requested, or try again later. You may also contact sales at https://www.anthropic.com/contact-sales to discuss your options for a rate limit increase."}}`
)

// fail is an error reply; header holds name, value pairs.
func fail(status int, body string, header ...string) reply {
	h := map[string]string{}
	for i := 0; i+1 < len(header); i += 2 {
		h[header[i]] = header[i+1]
	}
	return reply{status: status, header: h, body: body}
}

// answer is a 200 Messages API response with one text block.
func answer(text, stopReason string) reply {
	msg := map[string]any{
		"id": "msg_01XFDUDYJgAACzvnptvVoYEL", "type": "message", "role": "assistant",
		"model":       "claude-sonnet-4-5",
		"content":     []any{map[string]any{"type": "text", "text": text}},
		"stop_reason": stopReason, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 2095, "output_tokens": 503},
	}
	if stopReason == "refusal" {
		// The shape of
		// https://platform.claude.com/docs/en/test-and-evaluate/strengthen-guardrails/handle-streaming-refusals
		msg["stop_details"] = map[string]any{"type": "refusal", "category": "cyber",
			"explanation": "This request was declined because it could enable cyber harm."}
	}
	b, err := json.Marshal(msg)
	if err != nil {
		return fail(http.StatusInternalServerError, fmt.Sprintf(`{"type":"error","error":{"type":"api_error","message":%q}}`, err.Error()))
	}
	return reply{status: http.StatusOK, body: string(b)}
}
