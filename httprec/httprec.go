// Package httprec records the last failed HTTP response a client saw, for
// SDKs whose error values drop the response headers or body.
//
// Some provider SDKs return an error that carries the status and a parsed
// message but not the headers: Google's genai APIError, for one, has no
// Retry-After and no Date. Wrap the SDK's HTTP transport in a Recorder, and
// after a failed call fill the missing fields of the erradvisor.Failure from
// the recorded response:
//
//	rec := httprec.New(nil)
//	client, _ := genai.NewClient(ctx, &genai.ClientConfig{HTTPClient: rec.Client()})
//
//	rec.Reset() // before each request
//	_, err := client.Models.GenerateContent(ctx, model, contents, nil)
//	if err != nil {
//		f := adapter.Failure(err)
//		if r, ok := rec.Last(); ok {
//			r.Fill(&f) // Retry-After, Date, rate-limit headers
//		}
//	}
//
// The Recorder changes nothing on the wire and nothing the SDK sees: a failed
// response's body is copied while the SDK reads it, up to a bound, and is
// handed on whole. Successful responses pass through untouched.
package httprec

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/erradvisor/erradvisor"
)

// DefaultMaxBody is how many bytes of a failed response's body a Recorder
// keeps when its MaxBody is zero. Error bodies are small; a longer one (an
// HTML error page) is cut.
const DefaultMaxBody = 64 << 10

// recordedHeaders are the headers a Recorder keeps, in canonical form; the
// prefixes in recordedPrefixes are kept too. They are the headers that say
// how long to wait, how much of a limit is left, and when the response was
// sent.
var recordedHeaders = []string{
	"Retry-After",
	"Retry-After-Ms",
	"X-Amz-Retry-After",
	"X-Should-Retry",
	"Date",
	"X-Request-Id",
}

var recordedPrefixes = []string{
	"X-Ratelimit-",
	"Anthropic-Ratelimit-",
}

// Response is what a Recorder kept of one failed HTTP response.
type Response struct {
	// Status is the HTTP status code (400 or more).
	Status int
	// Header holds the rate-limit and retry headers of the response:
	// Retry-After, Retry-After-Ms, X-Amz-Retry-After, X-Should-Retry, Date,
	// X-Request-Id, X-Ratelimit-* and Anthropic-Ratelimit-*. Other headers
	// are not kept.
	Header http.Header
	// Body is the start of the response body as the SDK read it, at most
	// the Recorder's MaxBody bytes. It is empty when the SDK closed the
	// body without reading it.
	Body string
	// At is the time in the response's Date header, or the zero time when
	// the header is missing or unreadable.
	At time.Time
}

// Fill sets the fields of f that are empty from r: Status when it is 0,
// Header when it is nil, Message when it is "" and At when it is zero.
// Fields f already has are kept.
//
// When f.Status is set and differs from r.Status, the recorded response is
// not the one f describes, and Fill changes nothing. A nil f is ignored.
func (r Response) Fill(f *erradvisor.Failure) {
	if f == nil || (f.Status != 0 && f.Status != r.Status) {
		return
	}
	if f.Status == 0 {
		f.Status = r.Status
	}
	if f.Header == nil && r.Header != nil {
		f.Header = r.Header.Clone()
	}
	if f.Message == "" {
		f.Message = r.Body
	}
	if f.At.IsZero() {
		f.At = r.At
	}
}

// Recorder is an http.RoundTripper that passes requests to a base transport
// and remembers the last failed response (status 400 or more).
//
// A Recorder is safe for concurrent use. With several requests in flight,
// "last" means the failed response that completed last: the one whose body
// the SDK finished reading (or closed) most recently. A request loop that
// wants the response of its own call calls Reset before each request and
// shares the Recorder with no other loop.
type Recorder struct {
	// MaxBody caps how many bytes of a failed response's body are kept;
	// 0 means DefaultMaxBody and a negative value keeps none. Set it before
	// the Recorder is first used.
	MaxBody int

	base http.RoundTripper

	mu   sync.Mutex
	gen  uint64 // incremented by Reset
	last Response
	ok   bool
}

// New returns a Recorder that sends requests through base, or through
// http.DefaultTransport when base is nil.
func New(base http.RoundTripper) *Recorder {
	if base == nil {
		base = http.DefaultTransport
	}
	return &Recorder{base: base}
}

// Client returns an *http.Client that sends its requests through r, to hand
// to an SDK's client options.
func (r *Recorder) Client() *http.Client {
	return &http.Client{Transport: r}
}

// RoundTrip implements http.RoundTripper. It sends req through the base
// transport and returns its response and error unchanged, except that the
// body of a failed response is copied, up to MaxBody bytes, as it is read.
// The record is kept when the body has been read to its end or closed.
func (r *Recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	base := r.base
	if base == nil {
		base = http.DefaultTransport
	}
	// The generation is read before the request goes out, so that a Reset
	// made while it is under way drops its record.
	r.mu.Lock()
	gen := r.gen
	r.mu.Unlock()
	resp, err := base.RoundTrip(req)
	if err != nil || resp == nil || resp.StatusCode < 400 {
		return resp, err
	}
	rec := Response{Status: resp.StatusCode, Header: pick(resp.Header)}
	if d := resp.Header.Get("Date"); d != "" {
		if t, perr := http.ParseTime(d); perr == nil {
			rec.At = t
		}
	}
	limit := r.MaxBody
	if limit == 0 {
		limit = DefaultMaxBody
	}
	if resp.Body == nil || resp.Body == http.NoBody {
		r.keep(gen, rec)
		return resp, nil
	}
	resp.Body = &teeBody{rc: resp.Body, r: r, gen: gen, rec: rec, limit: max(limit, 0)}
	return resp, nil
}

// Last returns the last failed response recorded since the Recorder was
// made or last Reset, and false when there is none.
func (r *Recorder) Last() (Response, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.ok {
		return Response{}, false
	}
	last := r.last
	last.Header = last.Header.Clone()
	return last, true
}

// Reset forgets the recorded response. Responses whose bodies are still
// being read when Reset is called are not recorded.
func (r *Recorder) Reset() {
	r.mu.Lock()
	r.gen++
	r.last, r.ok = Response{}, false
	r.mu.Unlock()
}

// keep records rec unless a Reset happened since its request was sent.
func (r *Recorder) keep(gen uint64, rec Response) {
	r.mu.Lock()
	if gen == r.gen {
		r.last, r.ok = rec, true
	}
	r.mu.Unlock()
}

// pick returns the recorded headers of h, or nil when it has none.
func pick(h http.Header) http.Header {
	var out http.Header
	add := func(k string, v []string) {
		if out == nil {
			out = make(http.Header)
		}
		out[k] = append([]string(nil), v...)
	}
	for k, v := range h {
		ck := http.CanonicalHeaderKey(k)
		for _, name := range recordedHeaders {
			if ck == name {
				add(ck, v)
			}
		}
		for _, p := range recordedPrefixes {
			if strings.HasPrefix(ck, p) {
				add(ck, v)
			}
		}
	}
	return out
}

// teeBody hands a failed response's body on unchanged and copies its first
// limit bytes. The copy is recorded once, at the end of the body, on a read
// error, or on Close, whichever comes first.
type teeBody struct {
	rc    io.ReadCloser
	r     *Recorder
	gen   uint64
	rec   Response
	limit int

	mu   sync.Mutex // a body may be closed from another goroutine
	buf  []byte
	done bool
}

func (t *teeBody) Read(p []byte) (int, error) {
	n, err := t.rc.Read(p)
	t.mu.Lock()
	if !t.done {
		if room := t.limit - len(t.buf); room > 0 && n > 0 {
			t.buf = append(t.buf, p[:min(n, room)]...)
		}
		if err != nil {
			t.finish()
		}
	}
	t.mu.Unlock()
	return n, err
}

func (t *teeBody) Close() error {
	err := t.rc.Close()
	t.mu.Lock()
	if !t.done {
		t.finish()
	}
	t.mu.Unlock()
	return err
}

// finish records the copy; t.mu is held.
func (t *teeBody) finish() {
	t.done = true
	t.rec.Body = string(t.buf)
	t.buf = nil
	t.r.keep(t.gen, t.rec)
}
