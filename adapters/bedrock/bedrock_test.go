package bedrock_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/erradvisor/erradvisor"
	adapter "github.com/erradvisor/erradvisor/adapters/bedrock"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// A Bedrock error response: the x-amzn-ErrorType header names the exception
// and the body is {"message": ...}. The header shape is the one quoted at
// https://github.com/aws-samples/amazon-bedrock-client-for-mac/issues/99 and
// https://github.com/aws-samples/amazon-bedrock-client-for-mac/issues/11.
type awsError struct {
	status  int
	errType string
	message string // the exception's message, copied from source
	source  string // where the message was found
}

// Bedrock error messages with their sources. Where only the documented
// description of an exception is known, the source is the API reference and
// the message is that description.
var (
	// https://github.com/aws-samples/amazon-bedrock-client-for-mac/issues/99
	errThrottlingTokens = awsError{429, "ThrottlingException", "Too many tokens, please wait before trying again.",
		"https://github.com/aws-samples/amazon-bedrock-client-for-mac/issues/99"}
	errThrottlingPerDay = awsError{429, "ThrottlingException", "Too many tokens per day, please wait before trying again.",
		"https://github.com/minorun365/agent-book/issues/29"}
	errInputTooLong = awsError{400, "ValidationException", "Input is too long for requested model.",
		"https://github.com/aws-samples/assessment-generator/issues/2"}
	errContextLimit = awsError{400, "ValidationException", "The model returned the following errors: input length and `max_tokens` exceed context limit: 196395 + 64000 > 204698, decrease input length or `max_tokens` and try again",
		"https://github.com/RooCodeInc/Roo-Code/issues/3713"}
	errMaxTokensLimit = awsError{400, "ValidationException", "The maximum tokens you requested exceeds the model limit of 4096. Try again with a maximum tokens value that is lower than 4096.",
		"https://github.com/vercel/ai/issues/2772"}
	errAccessDenied = awsError{403, "AccessDeniedException", "You don't have access to the model with the specified model ID.",
		"https://github.com/aws-samples/generative-ai-to-build-a-devsecops-chatbot/issues/3"}
	errNotFound = awsError{404, "ResourceNotFoundException", "Could not resolve the foundation model from the provided model identifier.",
		"https://github.com/aws-samples/bedrock-chat/issues/91"}
	errUnavailable = awsError{503, "ServiceUnavailableException", "Too many connections, please wait before trying again.",
		"https://github.com/langchain-ai/langchain-aws/pull/968"}
	errInternal = awsError{500, "InternalServerException", "An internal server error occurred. Retry your request.",
		"https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html"}
	errModelTimeout = awsError{408, "ModelTimeoutException", "The request took too long to process. Processing time exceeded the model timeout length.",
		"https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html"}
	errModelError = awsError{424, "ModelErrorException", "The request failed due to an error while processing the model.",
		"https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_InvokeModel.html"}
	errModelNotReady = awsError{429, "ModelNotReadyException", "The model specified in the request is not ready to serve inference requests. The AWS SDK will automatically retry the operation up to 5 times.",
		"https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html"}
	errServiceQuota = awsError{400, "ServiceQuotaExceededException", "Your request exceeds the service quota for your account. You can view your quotas at Viewing service quotas. You can resubmit your request later.",
		"https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html"}
)

const requestID = "ca47a5ce-e260-4824-aa0e-2e62669d5d6e"

// httpDate is the Date of every error response.
const httpDate = "Mon, 12 May 2025 11:11:55 GMT"

// respond answers with e as Bedrock does, plus extra headers.
func respond(e awsError, headers ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Date", httpDate)
		h.Set("x-amzn-RequestId", requestID)
		h.Set("x-amzn-ErrorType", e.errType+":http://internal.amazon.com/coral/com.amazon.bedrock/")
		for i := 0; i+1 < len(headers); i += 2 {
			h.Set(headers[i], headers[i+1])
		}
		w.WriteHeader(e.status)
		fmt.Fprintf(w, `{"message":%q}`, e.message)
	}
}

// frame is one event stream message.
type frame struct {
	kind    string // "event" or "exception"
	typ     string // the :event-type or :exception-type
	payload string
}

// eventStream answers 200 with the frames encoded in the AWS event stream
// framing.
func eventStream(frames ...frame) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
		w.Header().Set("x-amzn-RequestId", requestID)
		w.WriteHeader(http.StatusOK)
		enc := eventstream.NewEncoder()
		for _, f := range frames {
			var buf bytes.Buffer
			msg := eventstream.Message{Payload: []byte(f.payload)}
			msg.Headers.Set(":message-type", eventstream.StringValue(f.kind))
			if f.kind == "exception" {
				msg.Headers.Set(":exception-type", eventstream.StringValue(f.typ))
			} else {
				msg.Headers.Set(":event-type", eventstream.StringValue(f.typ))
			}
			msg.Headers.Set(":content-type", eventstream.StringValue("application/json"))
			if err := enc.Encode(&buf, msg); err != nil {
				panic(err)
			}
			_, _ = w.Write(buf.Bytes())
			w.(http.Flusher).Flush()
		}
	}
}

var (
	frameStart = frame{"event", "messageStart", `{"role":"assistant"}`}
	frameDelta = frame{"event", "contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"Hel"}}`}
	// https://github.com/aws-samples/foundation-model-benchmarking-tool/issues/247
	// (the exception headers and body as the issue quotes them)
	frameUnavailable = frame{"exception", "serviceUnavailableException", `{"message":"Bedrock is unable to process your request."}`}
	// https://github.com/aws-samples/bedrock-chat/issues/95
	frameInputTooLong = frame{"exception", "validationException", `{"message":"Input is too long for requested model."}`}
	frameThrottling   = frame{"exception", "throttlingException", `{"message":"Too many tokens, please wait before trying again."}`}
	// ModelStreamErrorException's fields as the SDK declares them; the
	// message is the exception's documented description.
	frameModelStream = frame{"exception", "modelStreamErrorException", `{"message":"An error occurred while streaming the response. Retry your request.","originalStatusCode":429,"originalMessage":"Too many requests, please wait before trying again."}`}
	// InvokeModelWithResponseStream's chunk event.
	frameChunk = frame{"event", "chunk", `{"bytes":"eyJ0eXBlIjoibWVzc2FnZV9zdGFydCJ9"}`}
)

// hangUp closes the connection without answering.
func hangUp(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
		conn.Close()
	}
}

// hold answers nothing until the client goes away.
func hold(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	select {
	case <-r.Context().Done():
	case <-time.After(10 * time.Second):
	}
}

func staticCredentials(context.Context) (aws.Credentials, error) {
	return aws.Credentials{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "not-a-secret", Source: "test"}, nil
}

// newClient returns a real Bedrock Runtime client that sends to h, with the
// SDK's retries off.
func newClient(t *testing.T, h http.HandlerFunc, optFns ...func(*bedrockruntime.Options)) *bedrockruntime.Client {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return bedrockruntime.New(bedrockruntime.Options{
		BaseEndpoint:     aws.String(srv.URL),
		Region:           "us-east-1",
		Credentials:      aws.CredentialsProviderFunc(staticCredentials),
		HTTPClient:       srv.Client(),
		RetryMaxAttempts: 1,
	}, optFns...)
}

const modelID = "anthropic.claude-3-5-sonnet-20240620-v1:0"

var messages = []types.Message{{
	Role:    types.ConversationRoleUser,
	Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "hello"}},
}}

// A call makes one request with the real client and returns its error.
type call func(ctx context.Context, c *bedrockruntime.Client) error

func converse(ctx context.Context, c *bedrockruntime.Client) error {
	_, err := c.Converse(ctx, &bedrockruntime.ConverseInput{ModelId: aws.String(modelID), Messages: messages})
	return err
}

func converseStream(ctx context.Context, c *bedrockruntime.Client) error {
	out, err := c.ConverseStream(ctx, &bedrockruntime.ConverseStreamInput{ModelId: aws.String(modelID), Messages: messages})
	if err != nil {
		return err
	}
	s := out.GetStream()
	defer s.Close()
	for range s.Events() {
	}
	return s.Err()
}

var invokeBody = []byte(`{"anthropic_version":"bedrock-2023-05-31","max_tokens":256,"messages":[{"role":"user","content":"hello"}]}`)

func invoke(ctx context.Context, c *bedrockruntime.Client) error {
	_, err := c.InvokeModel(ctx, &bedrockruntime.InvokeModelInput{
		ModelId: aws.String(modelID), Body: invokeBody, ContentType: aws.String("application/json"),
	})
	return err
}

func invokeStream(ctx context.Context, c *bedrockruntime.Client) error {
	out, err := c.InvokeModelWithResponseStream(ctx, &bedrockruntime.InvokeModelWithResponseStreamInput{
		ModelId: aws.String(modelID), Body: invokeBody, ContentType: aws.String("application/json"),
	})
	if err != nil {
		return err
	}
	s := out.GetStream()
	defer s.Close()
	for range s.Events() {
	}
	return s.Err()
}

func TestClassifyEndToEnd(t *testing.T) {
	at, _ := http.ParseTime(httpDate)
	c := func(class erradvisor.Class, reason erradvisor.Reason, rule string) erradvisor.Classification {
		return erradvisor.Classification{Class: class, Reason: reason, Rule: rule}
	}
	tests := []struct {
		name    string
		handler http.HandlerFunc
		call    call
		timeout time.Duration
		cancel  time.Duration
		want    erradvisor.Classification
		// What the Failure must carry besides Provider and Err.
		wantStatus  int
		wantCode    string
		wantMessage string
		wantHTTP    bool   // the response's headers and Date reached the Failure
		wantHeader  string // a further header the Failure must hold
	}{
		{
			name: "Converse 429 ThrottlingException", handler: respond(errThrottlingTokens), call: converse,
			want:       c(erradvisor.Transient, erradvisor.ReasonRateLimit, "transient.rate_limit"),
			wantStatus: 429, wantCode: "ThrottlingException", wantMessage: "ThrottlingException: Too many tokens, please wait before trying again.", wantHTTP: true,
		},
		{
			name: "InvokeModel 429 ThrottlingException with X-Amz-Retry-After", handler: respond(errThrottlingTokens, "X-Amz-Retry-After", "3000"), call: invoke,
			want:       c(erradvisor.Transient, erradvisor.ReasonRateLimit, "transient.rate_limit"),
			wantStatus: 429, wantCode: "ThrottlingException", wantMessage: "ThrottlingException: Too many tokens, please wait before trying again.", wantHTTP: true,
			wantHeader: "X-Amz-Retry-After",
		},
		{
			name: "Converse 429 ThrottlingException tokens per day", handler: respond(errThrottlingPerDay), call: converse,
			want:       c(erradvisor.Quota, erradvisor.ReasonQuota, "quota.per_day"),
			wantStatus: 429, wantCode: "ThrottlingException", wantMessage: "ThrottlingException: Too many tokens per day, please wait before trying again.", wantHTTP: true,
		},
		{
			name: "Converse 400 ValidationException input is too long", handler: respond(errInputTooLong), call: converse,
			want:       c(erradvisor.Overflow, erradvisor.ReasonContextWindow, "overflow.context_window"),
			wantStatus: 400, wantCode: "ValidationException", wantMessage: "ValidationException: Input is too long for requested model.", wantHTTP: true,
		},
		{
			name: "InvokeModel 400 ValidationException context limit", handler: respond(errContextLimit), call: invoke,
			want:       c(erradvisor.Overflow, erradvisor.ReasonContextWindow, "overflow.stated"),
			wantStatus: 400, wantCode: "ValidationException", wantMessage: "ValidationException: " + errContextLimit.message, wantHTTP: true,
		},
		{
			name: "Converse 400 ValidationException max tokens over the model limit", handler: respond(errMaxTokensLimit), call: converse,
			want:       c(erradvisor.Permanent, erradvisor.ReasonInvalidRequest, "invalid.output_budget"),
			wantStatus: 400, wantCode: "ValidationException", wantMessage: "ValidationException: " + errMaxTokensLimit.message, wantHTTP: true,
		},
		{
			name: "InvokeModel 403 AccessDeniedException", handler: respond(errAccessDenied), call: invoke,
			want:       c(erradvisor.Permanent, erradvisor.ReasonPermission, "permission.denied"),
			wantStatus: 403, wantCode: "AccessDeniedException", wantMessage: "AccessDeniedException: " + errAccessDenied.message, wantHTTP: true,
		},
		{
			name: "Converse 404 ResourceNotFoundException", handler: respond(errNotFound), call: converse,
			want:       c(erradvisor.Permanent, erradvisor.ReasonModelNotFound, "model.not_found"),
			wantStatus: 404, wantCode: "ResourceNotFoundException", wantMessage: "ResourceNotFoundException: " + errNotFound.message, wantHTTP: true,
		},
		{
			name: "Converse 503 ServiceUnavailableException", handler: respond(errUnavailable), call: converse,
			want:       c(erradvisor.Transient, erradvisor.ReasonOverloaded, "transient.overloaded"),
			wantStatus: 503, wantCode: "ServiceUnavailableException", wantMessage: "ServiceUnavailableException: " + errUnavailable.message, wantHTTP: true,
		},
		{
			name: "InvokeModel 500 InternalServerException", handler: respond(errInternal), call: invoke,
			want:       c(erradvisor.Transient, erradvisor.ReasonServer, "transient.server"),
			wantStatus: 500, wantCode: "InternalServerException", wantMessage: "InternalServerException: " + errInternal.message, wantHTTP: true,
		},
		{
			name: "InvokeModel 408 ModelTimeoutException", handler: respond(errModelTimeout), call: invoke,
			want:       c(erradvisor.Transient, erradvisor.ReasonTimeout, "transient.timeout"),
			wantStatus: 408, wantCode: "ModelTimeoutException", wantMessage: "ModelTimeoutException: " + errModelTimeout.message, wantHTTP: true,
		},
		{
			name: "InvokeModel 424 ModelErrorException", handler: respond(errModelError), call: invoke,
			want:       c(erradvisor.Transient, erradvisor.ReasonServer, "transient.server"),
			wantStatus: 424, wantCode: "ModelErrorException", wantMessage: "ModelErrorException: " + errModelError.message, wantHTTP: true,
		},
		{
			name: "InvokeModel 429 ModelNotReadyException", handler: respond(errModelNotReady), call: invoke,
			want:       c(erradvisor.Transient, erradvisor.ReasonOverloaded, "transient.overloaded"),
			wantStatus: 429, wantCode: "ModelNotReadyException", wantMessage: "ModelNotReadyException: " + errModelNotReady.message, wantHTTP: true,
		},
		{
			name: "Converse 400 ServiceQuotaExceededException", handler: respond(errServiceQuota), call: converse,
			want:       c(erradvisor.Quota, erradvisor.ReasonQuota, "quota.exhausted"),
			wantStatus: 400, wantCode: "ServiceQuotaExceededException", wantMessage: "ServiceQuotaExceededException: " + errServiceQuota.message, wantHTTP: true,
		},
		{
			name: "ConverseStream 429 before the stream opens", handler: respond(errThrottlingTokens), call: converseStream,
			want:       c(erradvisor.Transient, erradvisor.ReasonRateLimit, "transient.rate_limit"),
			wantStatus: 429, wantCode: "ThrottlingException", wantMessage: "ThrottlingException: Too many tokens, please wait before trying again.", wantHTTP: true,
		},
		{
			name: "ConverseStream serviceUnavailableException in the stream", handler: eventStream(frameStart, frameDelta, frameUnavailable), call: converseStream,
			want:     c(erradvisor.Transient, erradvisor.ReasonOverloaded, "transient.overloaded"),
			wantCode: "ServiceUnavailableException", wantMessage: "ServiceUnavailableException: Bedrock is unable to process your request.",
		},
		{
			name: "ConverseStream validationException in the stream", handler: eventStream(frameStart, frameInputTooLong), call: converseStream,
			want:     c(erradvisor.Overflow, erradvisor.ReasonContextWindow, "overflow.context_window"),
			wantCode: "ValidationException", wantMessage: "ValidationException: Input is too long for requested model.",
		},
		{
			name: "ConverseStream throttlingException in the stream", handler: eventStream(frameStart, frameThrottling), call: converseStream,
			want:     c(erradvisor.Transient, erradvisor.ReasonRateLimit, "transient.rate_limit"),
			wantCode: "ThrottlingException", wantMessage: "ThrottlingException: Too many tokens, please wait before trying again.",
		},
		{
			name: "InvokeModelWithResponseStream modelStreamErrorException", handler: eventStream(frameChunk, frameModelStream), call: invokeStream,
			want:     c(erradvisor.Transient, erradvisor.ReasonRateLimit, "transient.rate_limit"),
			wantCode: "ModelStreamErrorException", wantMessage: "ModelStreamErrorException: An error occurred while streaming the response. Retry your request. (model status 429: Too many requests, please wait before trying again.)",
		},
		{
			name: "connection closed before a response", handler: hangUp, call: converse,
			want: c(erradvisor.Transient, erradvisor.ReasonStream, "go.eof"),
		},
		{
			name: "context canceled by the caller", handler: hold, call: converse, cancel: 50 * time.Millisecond,
			want: c(erradvisor.Canceled, erradvisor.ReasonAborted, "go.context_canceled"),
		},
		{
			name: "deadline exceeded", handler: hold, call: invoke, timeout: 50 * time.Millisecond,
			want: c(erradvisor.Transient, erradvisor.ReasonTimeout, "go.deadline_exceeded"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			client := newClient(t, tt.handler)
			ctx := context.Background()
			if tt.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.timeout)
				defer cancel()
			}
			if tt.cancel > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithCancel(ctx)
				defer cancel()
				time.AfterFunc(tt.cancel, cancel)
			}
			err := tt.call(ctx, client)
			if err == nil {
				t.Fatal("the call succeeded")
			}
			f := adapter.Failure(err)
			if f.Err != err || f.Provider != "bedrock" || f.Message == "" {
				t.Errorf("Failure = %+v; want Err the SDK's error, Provider bedrock, a Message", f)
			}
			if diff := cmp.Diff([2]any{tt.wantStatus, tt.wantCode}, [2]any{f.Status, f.Code}); diff != "" {
				t.Errorf("Failure status and code (-want +got):\n%s", diff)
			}
			if tt.wantMessage != "" && f.Message != tt.wantMessage {
				t.Errorf("Message = %q, want %q", f.Message, tt.wantMessage)
			}
			if tt.wantHTTP {
				if f.Header.Get("X-Amzn-Requestid") != requestID || f.Header.Get("X-Amzn-Errortype") == "" || !f.At.Equal(at) {
					t.Errorf("Failure lacks the response's headers or Date: Header %v, At %v", f.Header, f.At)
				}
				if tt.wantHeader != "" && f.Header.Get(tt.wantHeader) == "" {
					t.Errorf("Failure.Header lacks %s: %v", tt.wantHeader, f.Header)
				}
			} else if !f.At.IsZero() {
				t.Errorf("At = %v, want zero without a response", f.At)
			}
			if f.At.IsZero() {
				f.At = time.Now()
			}
			if diff := cmp.Diff(tt.want, erradvisor.Classify(f), ignoreEvidence); diff != "" {
				t.Errorf("classification (-want +got):\n%s\nfailure: %+v", diff, f)
			}
		})
	}
}

// TestMaxAttemptsError checks that the SDK's own exhausted retries keep the
// cause readable: the class of the last attempt's error decides.
func TestMaxAttemptsError(t *testing.T) {
	var n atomic.Int32
	client := newClient(t, func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		respond(errInputTooLong)(w, r)
	})
	err := converse(context.Background(), client)
	var maxErr *retry.MaxAttemptsError
	if !errors.As(err, &maxErr) {
		t.Logf("a non-retryable error is not wrapped: %v", err)
	}
	throttled := newClient(t, respond(errThrottlingTokens), func(o *bedrockruntime.Options) {
		o.RetryMaxAttempts = 2
		o.Retryer = retry.AddWithMaxBackoffDelay(retry.NewStandard(), time.Millisecond)
		o.Retryer = retry.AddWithMaxAttempts(o.Retryer, 2)
	})
	err = converse(context.Background(), throttled)
	if !errors.As(err, &maxErr) {
		t.Fatalf("err = %v, want a *retry.MaxAttemptsError", err)
	}
	f := adapter.Failure(err)
	if f.Err != err || f.Status != 429 || f.Code != "ThrottlingException" || strings.Contains(f.Message, "exceeded maximum number of attempts") {
		t.Errorf("Failure = %+v", f)
	}
	if c := adapter.Classify(err); c.Class != erradvisor.Transient || c.Reason != erradvisor.ReasonRateLimit {
		t.Errorf("Classify = %+v, want transient rate_limit", c)
	}
	if n.Load() != 1 {
		t.Errorf("RetryMaxAttempts 1 sent %d requests, want 1", n.Load())
	}
}

// TestNoSDKRetries checks what the README says: RetryMaxAttempts 1,
// retry.AddWithMaxAttempts(…, 1) and aws.NopRetryer send a retryable failure
// once, and the default retryer sends it three times.
func TestNoSDKRetries(t *testing.T) {
	fast := func() aws.Retryer { return retry.AddWithMaxBackoffDelay(retry.NewStandard(), time.Millisecond) }
	for _, tt := range []struct {
		name string
		opt  func(*bedrockruntime.Options)
		want int32
	}{
		{"RetryMaxAttempts 1", func(o *bedrockruntime.Options) { o.RetryMaxAttempts = 1 }, 1},
		{"AddWithMaxAttempts 1", func(o *bedrockruntime.Options) {
			o.RetryMaxAttempts = 0
			o.Retryer = retry.AddWithMaxAttempts(fast(), 1)
		}, 1},
		{"NopRetryer", func(o *bedrockruntime.Options) { o.RetryMaxAttempts = 0; o.Retryer = aws.NopRetryer{} }, 1},
		{"default", func(o *bedrockruntime.Options) { o.RetryMaxAttempts = 0; o.Retryer = fast() }, 3},
	} {
		var n atomic.Int32
		client := newClient(t, func(w http.ResponseWriter, r *http.Request) {
			n.Add(1)
			respond(errUnavailable)(w, r)
		}, tt.opt)
		err := converse(context.Background(), client)
		if err == nil {
			t.Fatal("the call succeeded")
		}
		if got := n.Load(); got != tt.want {
			t.Errorf("%s: %d requests, want %d", tt.name, got, tt.want)
		}
		if c := adapter.Classify(err); c.Class != erradvisor.Transient {
			t.Errorf("%s: Classify = %+v", tt.name, c)
		}
	}
}

func TestFailureWrapped(t *testing.T) {
	client := newClient(t, respond(errAccessDenied))
	err := fmt.Errorf("turn 3: %w", invoke(context.Background(), client))
	f := adapter.Failure(err)
	if f.Status != 403 || f.Code != "AccessDeniedException" || f.Err != err {
		t.Errorf("Failure(wrapped) = %+v", f)
	}
}

// TestNotBedrockJSON checks a gateway page instead of Bedrock's JSON: the
// status and headers still reach the Failure.
func TestNotBedrockJSON(t *testing.T) {
	client := newClient(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(502)
		fmt.Fprint(w, "<html><body><h1>502 Bad Gateway</h1></body></html>")
	})
	err := converse(context.Background(), client)
	f := adapter.Failure(err)
	if f.Status != 502 || f.Message != err.Error() {
		t.Errorf("Failure = %+v", f)
	}
	if c := adapter.Classify(err); c.Class != erradvisor.Transient {
		t.Errorf("Classify = %+v, want transient", c)
	}
}

func TestNil(t *testing.T) {
	if diff := cmp.Diff(erradvisor.Failure{}, adapter.Failure(nil)); diff != "" {
		t.Errorf("Failure(nil) (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(erradvisor.Classification{}, adapter.Classify(nil)); diff != "" {
		t.Errorf("Classify(nil) (-want +got):\n%s", diff)
	}
}

// TestStopReason covers every stop reason the SDK declares, and values it
// does not.
func TestStopReason(t *testing.T) {
	want := map[types.StopReason]erradvisor.StopReason{
		types.StopReasonEndTurn:                    erradvisor.StopEndTurn,
		types.StopReasonToolUse:                    erradvisor.StopToolUse,
		types.StopReasonMaxTokens:                  erradvisor.StopLength,
		types.StopReasonStopSequence:               erradvisor.StopEndTurn,
		types.StopReasonGuardrailIntervened:        erradvisor.StopRefused,
		types.StopReasonContentFiltered:            erradvisor.StopRefused,
		types.StopReasonMalformedModelOutput:       erradvisor.StopUnknown,
		types.StopReasonMalformedToolUse:           erradvisor.StopUnknown,
		types.StopReasonModelContextWindowExceeded: erradvisor.StopContextWindow,
		"":                  erradvisor.StopUnknown,
		"something_new":     erradvisor.StopUnknown,
		"END_TURN":          erradvisor.StopUnknown,
		"pause_turn":        erradvisor.StopUnknown,
		"content_filtered ": erradvisor.StopUnknown,
	}
	for _, r := range types.StopReasonEndTurn.Values() {
		if _, ok := want[r]; !ok {
			t.Errorf("the SDK declares %q, which this test does not cover", r)
		}
	}
	got := map[types.StopReason]erradvisor.StopReason{}
	for r := range want {
		got[r] = adapter.StopReason(r)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("StopReason (-want +got):\n%s", diff)
	}
}

// TestStopReasonFromConverse reads the stop reason of a real Converse
// response through the real client.
func TestStopReasonFromConverse(t *testing.T) {
	client := newClient(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"output":{"message":{"role":"assistant","content":[{"text":"Hel"}]}},"stopReason":"model_context_window_exceeded","usage":{"inputTokens":199990,"outputTokens":10,"totalTokens":200000},"metrics":{"latencyMs":812}}`)
	})
	out, err := client.Converse(context.Background(), &bedrockruntime.ConverseInput{ModelId: aws.String(modelID), Messages: messages})
	if err != nil {
		t.Fatal(err)
	}
	if got := adapter.StopReason(out.StopReason); got != erradvisor.StopContextWindow {
		t.Errorf("StopReason = %v, want contextWindow", got)
	}
}

// FuzzFailure feeds error responses with arbitrary types and bodies through
// the SDK's own deserializer and the adapter; nothing may panic.
func FuzzFailure(f *testing.F) {
	f.Add(429, "ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/", `{"message":"Too many tokens, please wait before trying again."}`)
	f.Add(400, "ValidationException", `{"message":"Input is too long for requested model."}`)
	f.Add(502, "", "<html>")
	f.Add(500, "ModelErrorException", `{"message":"x","originalStatusCode":424,"resourceName":"m"}`)
	f.Add(400, "", `{"__type":"ValidationException","message":"x"}`)
	f.Fuzz(func(t *testing.T, status int, errType, body string) {
		if status < 400 || status > 599 {
			status = 500
		}
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			h := http.Header{"Content-Type": {"application/json"}}
			if errType != "" {
				h["X-Amzn-Errortype"] = []string{errType}
			}
			return &http.Response{StatusCode: status, Header: h, Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
		})
		client := bedrockruntime.New(bedrockruntime.Options{
			BaseEndpoint: aws.String("http://example.invalid"), Region: "us-east-1",
			Credentials: aws.CredentialsProviderFunc(staticCredentials), HTTPClient: &http.Client{Transport: base},
			RetryMaxAttempts: 1,
		})
		err := converse(context.Background(), client)
		if err == nil {
			t.Fatal("a failed status gave no error")
		}
		fl := adapter.Failure(err)
		if fl.Err != err || fl.Message == "" || fl.Status != status {
			t.Fatalf("Failure = %+v", fl)
		}
		_ = erradvisor.Classify(fl)
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// ignoreEvidence leaves the classifier's evidence strength out of the
// comparisons: this adapter's tests are about what reaches the classifier.
var ignoreEvidence = cmpopts.IgnoreFields(erradvisor.Classification{}, "Evidence")
