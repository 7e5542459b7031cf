package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
)

// This file is the fake model provider: an httptest server that speaks a
// small part of the Anthropic Messages API (POST /v1/messages with
// "stream": true) and replays a script of replies, one per request. Errors
// before the stream are JSON bodies with an HTTP status, as the real API
// sends them; answers are text/event-stream bodies.

// reply is one scripted response.
type reply struct {
	status int               // HTTP status; 200 serves events as a stream
	header map[string]string // extra response headers
	body   string            // the JSON error body, when status is not 200
	events []sseEvent        // the stream, when status is 200
}

// sseEvent is one server-sent event.
type sseEvent struct {
	name string // the "event:" line
	data string // the "data:" line, a JSON object
}

// provider replays one script per scenario, at /s/{id}/v1/messages, and
// records every request it receives.
type provider struct {
	srv *httptest.Server

	mu       sync.Mutex
	scripts  map[string][]reply
	received map[string][]wireRequest
}

func newProvider() *provider {
	p := &provider{scripts: map[string][]reply{}, received: map[string][]wireRequest{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /s/{id}/v1/messages", p.messages)
	p.srv = httptest.NewServer(mux)
	return p
}

func (p *provider) Close() { p.srv.Close() }

// load installs the script of scenario id and returns the base URL a client
// for it uses.
func (p *provider) load(id string, script []reply) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.scripts[id] = script
	return p.srv.URL + "/s/" + id
}

// requests returns the requests scenario id received, in order.
func (p *provider) requests(id string) []wireRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]wireRequest(nil), p.received[id]...)
}

func (p *provider) messages(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	var req wireRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, nil, `{"type":"error","error":{"type":"invalid_request_error","message":"invalid JSON body"}}`)
		return
	}
	p.mu.Lock()
	p.received[id] = append(p.received[id], req)
	script := p.scripts[id]
	var next reply
	if len(script) > 0 {
		next, p.scripts[id] = script[0], script[1:]
	} else {
		next = reply{status: 500, body: `{"type":"error","error":{"type":"api_error","message":"script exhausted"}}`}
	}
	p.mu.Unlock()

	if r.Header.Get("x-api-key") == "" {
		writeError(w, http.StatusUnauthorized, nil, `{"type":"error","error":{"type":"authentication_error","message":"x-api-key header is required"}}`)
		return
	}
	if next.status != http.StatusOK {
		writeError(w, next.status, next.header, next.body)
		return
	}
	for k, v := range next.header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	for _, e := range next.events {
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", e.name, e.data)
	}
}

func writeError(w http.ResponseWriter, status int, header map[string]string, body string) {
	for k, v := range header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, body)
}

// Script helpers.

// failWith is an HTTP error reply; header holds name, value pairs.
func failWith(status int, body string, header ...string) reply {
	h := map[string]string{}
	for i := 0; i+1 < len(header); i += 2 {
		h[header[i]] = header[i+1]
	}
	return reply{status: status, header: h, body: body}
}

// answer streams a text answer that ends with stop reason "end_turn".
func answer(text string) reply {
	return streamed(1200, []block{{kind: "text", text: text}}, "end_turn", len(text)/4+1)
}

// cutAtMaxTokens streams text that ends with stop reason "max_tokens" after
// exactly maxTokens output tokens.
func cutAtMaxTokens(text string, inputTokens, maxTokens int) reply {
	return streamed(inputTokens, []block{{kind: "text", text: text}}, "max_tokens", maxTokens)
}

// thinkingOnly streams a turn that carries a thinking block and nothing
// else, ending with "end_turn".
func thinkingOnly(thought string) reply {
	return streamed(1500, []block{{kind: "thinking", text: thought}}, "end_turn", 180)
}

// errorInStream starts a 200 stream and then sends an error event, as the
// API does when a model overloads mid-request.
func errorInStream(data string) reply {
	return reply{status: 200, events: []sseEvent{
		messageStart(1200),
		{"ping", `{"type":"ping"}`},
		{"error", data},
	}}
}

type block struct{ kind, text string } // kind is "text" or "thinking"

func streamed(inputTokens int, blocks []block, stopReason string, outputTokens int) reply {
	evs := []sseEvent{messageStart(inputTokens)}
	for i, b := range blocks {
		var start, delta string
		switch b.kind {
		case "thinking":
			start = `{"type":"thinking","thinking":""}`
			delta = `{"type":"thinking_delta","thinking":` + quote(b.text) + `}`
		default:
			start = `{"type":"text","text":""}`
			delta = `{"type":"text_delta","text":` + quote(b.text) + `}`
		}
		idx := strconv.Itoa(i)
		evs = append(evs,
			sseEvent{"content_block_start", `{"type":"content_block_start","index":` + idx + `,"content_block":` + start + `}`},
			sseEvent{"content_block_delta", `{"type":"content_block_delta","index":` + idx + `,"delta":` + delta + `}`},
			sseEvent{"content_block_stop", `{"type":"content_block_stop","index":` + idx + `}`},
		)
	}
	return reply{status: 200, events: append(evs,
		sseEvent{"message_delta", `{"type":"message_delta","delta":{"stop_reason":"` + stopReason +
			`","stop_sequence":null},"usage":{"output_tokens":` + strconv.Itoa(outputTokens) + `}}`},
		sseEvent{"message_stop", `{"type":"message_stop"}`},
	)}
}

func messageStart(inputTokens int) sseEvent {
	return sseEvent{"message_start", `{"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant",` +
		`"model":"claude-sonnet-4-5","content":[],"stop_reason":null,"usage":{"input_tokens":` +
		strconv.Itoa(inputTokens) + `,"output_tokens":1}}}`}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// lastUserText returns the text blocks of the last message of req, joined by
// newlines: where the loop puts its notes.
func lastUserText(req wireRequest) []string {
	if len(req.Messages) == 0 {
		return nil
	}
	m := req.Messages[len(req.Messages)-1]
	var out []string
	for _, b := range m.Content {
		if b.Type == "text" {
			out = append(out, b.Text)
		}
	}
	return out
}
