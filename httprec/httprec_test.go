package httprec_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/erradvisor/erradvisor"
	"github.com/erradvisor/erradvisor/httprec"
	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
)

// fixture is one failed response of testdata/responses.yaml.
type fixture struct {
	Name       string            `yaml:"name"`
	Source     string            `yaml:"source"`
	Comment    string            `yaml:"comment"`
	Status     int               `yaml:"status"`
	Headers    map[string]string `yaml:"headers"`
	Body       string            `yaml:"body"`
	WantHeader []string          `yaml:"want_header"`
	WantAt     time.Time         `yaml:"want_at"`
}

func loadFixtures(t testing.TB) []fixture {
	t.Helper()
	data, err := os.ReadFile("testdata/responses.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var fs []fixture
	if err := yaml.Unmarshal(data, &fs); err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		if f.Name == "" || !strings.HasPrefix(f.Source, "https://") || f.Status < 400 {
			t.Fatalf("fixture %q lacks a name, a source URL or a failed status", f.Name)
		}
	}
	return fs
}

// serve answers /NAME with the fixture NAME and any other path with 200 "ok".
func serve(t testing.TB, fs []fixture) *httptest.Server {
	t.Helper()
	byName := map[string]fixture{}
	for _, f := range fs {
		byName["/"+f.Name] = f
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, ok := byName[r.URL.Path]
		if !ok {
			w.Header().Set("Retry-After", "1") // must not be recorded: not a failure
			fmt.Fprint(w, "ok")
			return
		}
		w.Header()["Date"] = nil // no Date unless the fixture has one
		for k, v := range f.Headers {
			w.Header().Set(k, v)
		}
		w.WriteHeader(f.Status)
		fmt.Fprint(w, f.Body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// get makes a GET request through c and returns the whole body it read.
func get(t testing.TB, c *http.Client, url string) (int, string) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func headerNames(h http.Header) []string {
	var names []string
	for k := range h {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

func TestRecordsFailedResponses(t *testing.T) {
	fs := loadFixtures(t)
	srv := serve(t, fs)
	for _, f := range fs {
		t.Run(f.Name, func(t *testing.T) {
			rec := httprec.New(nil)
			status, body := get(t, rec.Client(), srv.URL+"/"+f.Name)
			if diff := cmp.Diff(f.Body, body); status != f.Status || diff != "" {
				t.Fatalf("the caller got %d and a changed body (-want +got):\n%s", status, diff)
			}
			got, ok := rec.Last()
			if !ok {
				t.Fatal("Last() reported nothing")
			}
			want := append([]string(nil), f.WantHeader...)
			sort.Strings(want)
			if len(want) == 0 {
				want = nil
			}
			if diff := cmp.Diff(want, headerNames(got.Header)); diff != "" {
				t.Errorf("recorded headers (-want +got):\n%s", diff)
			}
			for _, k := range f.WantHeader {
				if got.Header.Get(k) != f.Headers[strings.ToLower(k)] {
					t.Errorf("header %s = %q, want %q", k, got.Header.Get(k), f.Headers[strings.ToLower(k)])
				}
			}
			gotFields := struct {
				Status int
				Body   string
				At     time.Time
			}{got.Status, got.Body, got.At}
			wantFields := gotFields
			wantFields.Status, wantFields.Body, wantFields.At = f.Status, f.Body, f.WantAt
			if diff := cmp.Diff(wantFields, gotFields); diff != "" {
				t.Errorf("record (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSuccessIsNotRecorded(t *testing.T) {
	fs := loadFixtures(t)
	srv := serve(t, fs)
	rec := httprec.New(nil)
	c := rec.Client()

	get(t, c, srv.URL+"/ok")
	if r, ok := rec.Last(); ok {
		t.Fatalf("Last() after a 200 = %+v, true", r)
	}
	get(t, c, srv.URL+"/"+fs[0].Name)
	get(t, c, srv.URL+"/ok")
	r, ok := rec.Last()
	if !ok || r.Status != fs[0].Status {
		t.Errorf("Last() after a failure then a 200 = %d, %v; want the failure %d", r.Status, ok, fs[0].Status)
	}
	rec.Reset()
	if _, ok := rec.Last(); ok {
		t.Error("Last() after Reset reported a response")
	}
}

func TestMaxBody(t *testing.T) {
	fs := loadFixtures(t)
	srv := serve(t, fs)
	f := fs[0]
	for _, tt := range []struct {
		max  int
		want string
	}{
		{max: 10, want: f.Body[:10]},
		{max: -1, want: ""},
		{max: 0, want: f.Body},
		{max: len(f.Body) + 1, want: f.Body},
	} {
		rec := httprec.New(nil)
		rec.MaxBody = tt.max
		_, body := get(t, rec.Client(), srv.URL+"/"+f.Name)
		if body != f.Body {
			t.Errorf("MaxBody %d: the caller's body was changed", tt.max)
		}
		r, _ := rec.Last()
		if diff := cmp.Diff(tt.want, r.Body); diff != "" {
			t.Errorf("MaxBody %d: recorded body (-want +got):\n%s", tt.max, diff)
		}
	}
}

func TestDefaultMaxBody(t *testing.T) {
	big := strings.Repeat("x", httprec.DefaultMaxBody+100)
	rec := httprec.New(fixed(500, nil, big))
	_, body := get(t, rec.Client(), "http://example.invalid/")
	r, _ := rec.Last()
	if body != big || r.Body != big[:httprec.DefaultMaxBody] {
		t.Errorf("caller got %d bytes, record kept %d; want %d and %d", len(body), len(r.Body), len(big), httprec.DefaultMaxBody)
	}
}

// roundTripFunc is a base transport that answers without a network.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// fixed answers every request with status, h and body.
func fixed(status int, h http.Header, body string) roundTripFunc {
	return func(r *http.Request) (*http.Response, error) {
		if h == nil {
			h = http.Header{}
		}
		return &http.Response{StatusCode: status, Header: h.Clone(), Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
	}
}

func TestCloseWithoutReading(t *testing.T) {
	rec := httprec.New(fixed(503, http.Header{"Retry-After": {"5"}}, "overloaded"))
	resp, err := rec.Client().Get("http://example.invalid/")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := rec.Last(); ok {
		t.Error("recorded before the body was read or closed")
	}
	resp.Body.Close()
	r, ok := rec.Last()
	want := httprec.Response{Status: 503, Header: http.Header{"Retry-After": {"5"}}}
	if diff := cmp.Diff(want, r); !ok || diff != "" {
		t.Errorf("Last() after Close (-want +got):\n%s", diff)
	}
}

func TestResetWhileReading(t *testing.T) {
	rec := httprec.New(fixed(429, nil, "slow down"))
	resp, err := rec.Client().Get("http://example.invalid/")
	if err != nil {
		t.Fatal(err)
	}
	rec.Reset()
	_, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if r, ok := rec.Last(); ok {
		t.Errorf("a response sent before Reset was recorded: %+v", r)
	}
}

func TestNoBody(t *testing.T) {
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 404, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	})
	rec := httprec.New(base)
	resp, err := rec.Client().Get("http://example.invalid/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if r, ok := rec.Last(); !ok || r.Status != 404 {
		t.Errorf("Last() = %+v, %v; want the 404", r, ok)
	}
}

func TestTransportError(t *testing.T) {
	boom := errors.New("connection refused")
	rec := httprec.New(roundTripFunc(func(*http.Request) (*http.Response, error) { return nil, boom }))
	req, _ := http.NewRequest(http.MethodGet, "http://example.invalid/", nil)
	if _, err := rec.RoundTrip(req); !errors.Is(err, boom) {
		t.Errorf("RoundTrip error = %v, want %v", err, boom)
	}
	if _, ok := rec.Last(); ok {
		t.Error("a transport error was recorded")
	}
}

func TestLastIsACopy(t *testing.T) {
	rec := httprec.New(fixed(429, http.Header{"Retry-After": {"5"}}, ""))
	get(t, rec.Client(), "http://example.invalid/")
	r, _ := rec.Last()
	r.Header.Set("Retry-After", "999")
	if r2, _ := rec.Last(); r2.Header.Get("Retry-After") != "5" {
		t.Error("changing the returned Header changed the record")
	}
}

func TestFill(t *testing.T) {
	at := time.Date(2025, 5, 12, 11, 11, 55, 0, time.UTC)
	now := at.Add(time.Second)
	rec := httprec.Response{Status: 429, Header: http.Header{"Retry-After": {"7"}}, Body: "body", At: at}
	tests := []struct {
		name string
		in   erradvisor.Failure
		want erradvisor.Failure
	}{
		{
			name: "empty failure takes everything",
			in:   erradvisor.Failure{Provider: "gemini"},
			want: erradvisor.Failure{Provider: "gemini", Status: 429, Header: rec.Header, Message: "body", At: at},
		},
		{
			name: "fields already set are kept",
			in:   erradvisor.Failure{Status: 429, Message: "sdk text", Header: http.Header{"X": {"y"}}, At: now},
			want: erradvisor.Failure{Status: 429, Message: "sdk text", Header: http.Header{"X": {"y"}}, At: now},
		},
		{
			name: "same status: the missing header and time are filled",
			in:   erradvisor.Failure{Status: 429, Message: "sdk text"},
			want: erradvisor.Failure{Status: 429, Message: "sdk text", Header: rec.Header, At: at},
		},
		{
			name: "another status: the record is of another response",
			in:   erradvisor.Failure{Status: 400, Message: "bad request"},
			want: erradvisor.Failure{Status: 400, Message: "bad request"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.in
			rec.Fill(&got)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Fill (-want +got):\n%s", diff)
			}
		})
	}
	rec.Fill(nil) // must not panic
}

// TestFillThenClassify checks that a recorded Retry-After reaches the
// classification of a failure whose SDK error had no headers.
func TestFillThenClassify(t *testing.T) {
	fs := loadFixtures(t)
	srv := serve(t, fs)
	rec := httprec.New(nil)
	get(t, rec.Client(), srv.URL+"/gemini-503-overloaded")
	f := erradvisor.Failure{Provider: "gemini", Status: 503,
		Message: `{"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}`}
	r, _ := rec.Last()
	r.Fill(&f)
	f.At = time.Now()
	c := erradvisor.Classify(f)
	if c.Class != erradvisor.Transient || c.RetryAfter != 30*time.Second {
		t.Errorf("Classify = %+v; want transient with RetryAfter 30s", c)
	}
}

// TestConcurrent runs many requests through one Recorder at once; run it
// with -race. Every record must be one whole response, never a mix.
func TestConcurrent(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := r.URL.Query().Get("n")
		w.Header().Set("Retry-After", n)
		w.WriteHeader(500 + len(n)%4)
		fmt.Fprint(w, "body-"+n)
	}))
	defer srv.Close()
	rec := httprec.New(nil)
	c := rec.Client()
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for j := 0; j < 10; j++ {
				n := fmt.Sprint(i*100 + j)
				resp, err := c.Get(srv.URL + "/?n=" + n)
				if err != nil {
					t.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				// Another goroutine's Reset may have cleared the record.
				if r, ok := rec.Last(); ok && (r.Body != "body-"+r.Header.Get("Retry-After") || r.Status != 500+len(r.Header.Get("Retry-After"))%4) {
					t.Errorf("Last() = %+v, %v: not one whole response", r, ok)
				}
				if j == 5 {
					rec.Reset()
				}
			}
		}(i)
	}
	wg.Wait()
}

// TestRequestContext checks that the Recorder keeps the request's context:
// a canceled request fails as it would without it.
func TestRequestContext(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	defer srv.Close()
	rec := httprec.New(nil)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	_, err := rec.Client().Do(req)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want a deadline", err)
	}
	if _, ok := rec.Last(); ok {
		t.Error("a timed-out request was recorded")
	}
}

func FuzzRecorder(f *testing.F) {
	f.Add(429, "Retry-After", "20", `{"error":{"code":429}}`, 0)
	f.Add(503, "x-ratelimit-reset-tokens", "644ms", "", 5)
	f.Add(500, "Date", "Mon, 12 May 2025 11:11:55 GMT", "<html>", -1)
	f.Add(200, "Retry-After", "1", "ok", 10)
	f.Fuzz(func(t *testing.T, status int, name, value, body string, maxBody int) {
		if status < 100 || status > 999 {
			status = 500
		}
		h := http.Header{}
		h[name] = []string{value}
		rec := httprec.New(fixed(status, h, body))
		rec.MaxBody = maxBody
		req, _ := http.NewRequest(http.MethodGet, "http://example.invalid/", nil)
		resp, err := rec.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !bytes.Equal(got, []byte(body)) {
			t.Fatalf("the caller's body changed: %q, want %q", got, body)
		}
		r, ok := rec.Last()
		if ok != (status >= 400) {
			t.Fatalf("recorded = %v for status %d", ok, status)
		}
		if !strings.HasPrefix(body, r.Body) {
			t.Fatalf("recorded body %q is not a prefix of %q", r.Body, body)
		}
		var fl erradvisor.Failure
		r.Fill(&fl)
		_ = erradvisor.Classify(fl)
	})
}
