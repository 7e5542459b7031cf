package erradvisor

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Hostile error types.

// nilDerefError dereferences its receiver, as most error types do: a nil
// *nilDerefError panics in every method.
type nilDerefError struct{ msg string }

func (e *nilDerefError) Error() string   { return e.msg }
func (e *nilDerefError) Timeout() bool   { return len(e.msg) > 0 }
func (e *nilDerefError) Temporary() bool { return false }

// selfError unwraps to itself.
type selfError struct{}

func (e *selfError) Error() string { return "self" }
func (e *selfError) Unwrap() error { return e }

// valueLoop is a value type whose Unwrap returns a new, different value for
// ever: no visited set can catch it, only the budget.
type valueLoop struct{ n int }

func (v valueLoop) Error() string { return "loop" }
func (v valueLoop) Unwrap() error { return valueLoop{v.n + 1} }

// fanOut unwraps to itself twice and to its child: a naive walk doubles at
// every step.
type fanOut struct{ child error }

func (e *fanOut) Error() string   { return "fan out" }
func (e *fanOut) Unwrap() []error { return []error{e, e, e.child} }

// cycleError is a node of a cycle built after the fact.
type cycleError struct{ next error }

func (e *cycleError) Error() string { return "cycle" }
func (e *cycleError) Unwrap() error { return e.next }

// panicError panics in every method.
type panicError struct{ inner error }

func (e *panicError) Error() string          { panic("Error") }
func (e *panicError) Unwrap() error          { panic("Unwrap") }
func (e *panicError) Is(error) bool          { panic("Is") }
func (e *panicError) As(any) bool            { panic("As") }
func (e *panicError) Timeout() bool          { panic("Timeout") }
func (e *panicError) Temporary() bool        { panic("Temporary") }
func (e panicError) String() string          { panic("String") }
func (e *panicError) Format(fmt.State, rune) { panic("Format") }

// listError is an error of a non-comparable type: == on two of them panics.
type listError []string

func (l listError) Error() string { return fmt.Sprint([]string(l)) }

// isCanceled reports context.Canceled through an Is method.
type isCanceled struct{}

func (isCanceled) Error() string          { return "stopped" }
func (isCanceled) Is(target error) bool   { return target == context.Canceled }
func (isCanceled) Unwrap() error          { return nil }
func (isCanceled) As(target any) bool     { return false }
func (isCanceled) Timeout() bool          { return false }
func (isCanceled) Temporary() bool        { return false }
func (isCanceled) LogValue() (s struct{}) { return }

// asDNS reports a *net.DNSError through an As method only.
type asDNS struct{}

func (asDNS) Error() string { return "resolver said no" }
func (asDNS) As(target any) bool {
	if p, ok := target.(**net.DNSError); ok {
		*p = &net.DNSError{Err: "no such host", Name: "api.example.com", IsTimeout: true}
		return true
	}
	return false
}

var (
	nilOp    *net.OpError
	nilDNS   *net.DNSError
	nilURL   *url.Error
	nilDeref *nilDerefError
)

// classifyQuickly runs ClassifyError and fails the test if it panics or
// does not return within ten seconds (it takes microseconds; the guarded
// shapes never end).
func classifyQuickly(t *testing.T, err error) Classification {
	t.Helper()
	type result struct {
		cl  Classification
		pnc any
	}
	done := make(chan result, 1)
	go func() {
		var r result
		defer func() {
			r.pnc = recover()
			done <- r
		}()
		r.cl = ClassifyError(err)
	}()
	select {
	case r := <-done:
		if r.pnc != nil {
			t.Fatalf("ClassifyError panicked: %v", r.pnc)
		}
		return r.cl
	case <-time.After(10 * time.Second):
		t.Fatal("ClassifyError did not return within ten seconds")
	}
	return Classification{}
}

func TestClassifyErrorTypedNilOpError(t *testing.T) {
	for _, err := range []error{
		nilOp,
		fmt.Errorf("post: %w", nilOp),
		errors.Join(errors.New("first"), nilOp),
		&url.Error{Op: "Post", URL: "https://x", Err: nilOp},
	} {
		if got := classifyQuickly(t, err); got.Class == Transient && got.Rule == "go.net_op" {
			t.Errorf("%T: a typed nil was read as a network error: %+v", err, got)
		}
	}
}

func TestClassifyErrorTypedNilDNSError(t *testing.T) {
	for _, err := range []error{
		nilDNS,
		fmt.Errorf("dial: %w", nilDNS),
		&net.OpError{Op: "dial", Net: "tcp", Err: nilDNS},
		errors.Join(nilDNS, nilDNS),
	} {
		if got := classifyQuickly(t, err); got.Rule == "go.dns" {
			t.Errorf("%T: a typed nil was read as a DNS error: %+v", err, got)
		}
	}
	// A real DNS error after a typed nil in the same join is still found.
	real := &net.DNSError{Err: "no such host", Name: "api.example.com", IsNotFound: true}
	got := classifyQuickly(t, errors.Join(nilDNS, real))
	want := Classification{Class: Transient, Reason: ReasonNetwork, Rule: "go.dns"}
	if diff := cmp.Diff(want, got, ignoreEvidence); diff != "" {
		t.Errorf("join(nil, dns) (-want +got):\n%s", diff)
	}
}

func TestClassifyErrorTypedNilURLError(t *testing.T) {
	for _, err := range []error{
		nilURL,
		fmt.Errorf("request: %w", nilURL),
		errors.Join(nilURL, fmt.Errorf("x: %w", nilURL)),
	} {
		classifyQuickly(t, err)
	}
	got := classifyQuickly(t, errors.Join(nilURL, context.Canceled))
	if got.Class != Canceled {
		t.Errorf("join(nil url, canceled) = %+v, want canceled", got)
	}
}

func TestClassifyErrorTypedNilCustom(t *testing.T) {
	for _, err := range []error{
		nilDeref,
		fmt.Errorf("a: %w", fmt.Errorf("b: %w", nilDeref)),
		errors.Join(nilDeref, errors.Join(nilDeref, nilOp)),
		fmt.Errorf("two: %w and %w", nilDeref, nilURL),
		&net.OpError{Op: "read", Err: nilDeref}, // OpError.Timeout calls the nil's Timeout
	} {
		classifyQuickly(t, err)
	}
	if got := classifyQuickly(t, nilDeref); got != (Classification{}) {
		t.Errorf("a typed nil alone = %+v, want Unknown", got)
	}
}

func TestClassifyErrorSelfUnwrap(t *testing.T) {
	got := classifyQuickly(t, &selfError{})
	if got != (Classification{}) {
		t.Errorf("self-unwrapping error = %+v, want Unknown", got)
	}
	got = classifyQuickly(t, fmt.Errorf("x: %w", errors.Join(&selfError{}, syscall.ECONNRESET)))
	want := Classification{Class: Transient, Reason: ReasonNetwork, Rule: "go.econnreset"}
	if diff := cmp.Diff(want, got, ignoreEvidence); diff != "" {
		t.Errorf("join(self, reset) (-want +got):\n%s", diff)
	}
}

func TestClassifyErrorValueLoop(t *testing.T) {
	classifyQuickly(t, valueLoop{})
	if f := walkErrChain(valueLoop{}); f.visited != chainBudget {
		t.Errorf("visited %d errors, want the budget %d", f.visited, chainBudget)
	}
}

func TestClassifyErrorCycle(t *testing.T) {
	a := &cycleError{}
	b := &cycleError{next: a}
	a.next = fmt.Errorf("wrapped: %w", b)
	classifyQuickly(t, a)
	if f := walkErrChain(a); f.visited > 4 {
		t.Errorf("a cycle of three errors cost %d visits", f.visited)
	}
}

func TestClassifyErrorExponentialFanOut(t *testing.T) {
	var err error = syscall.ECONNREFUSED
	for range 100 {
		err = &fanOut{child: err}
	}
	classifyQuickly(t, err)
	// errors.Join of the same error twice at every level: 2^depth paths,
	// and text as long. Within the budget the leaf is found; beyond it the
	// chain is Unknown, and its text is not read.
	var j error = io.ErrUnexpectedEOF
	for range 30 {
		j = errors.Join(j, j)
	}
	deep := j
	for range 70 {
		deep = errors.Join(deep, deep)
	}
	if got := classifyQuickly(t, deep); got != (Classification{}) {
		t.Errorf("join nested 100 deep = %+v, want Unknown", got)
	}
	got := classifyQuickly(t, j)
	want := Classification{Class: Transient, Reason: ReasonStream, Rule: "go.unexpected_eof"}
	if diff := cmp.Diff(want, got, ignoreEvidence); diff != "" {
		t.Errorf("deep join (-want +got):\n%s", diff)
	}
	if f := walkErrChain(j); f.visited > chainBudget {
		t.Errorf("visited %d > %d", f.visited, chainBudget)
	}
}

func TestClassifyErrorPanickingMethods(t *testing.T) {
	for _, err := range []error{
		&panicError{},
		fmt.Errorf("x: %w", &panicError{}),
		errors.Join(&panicError{}, syscall.EPIPE),
		&net.OpError{Op: "read", Err: &panicError{}},
		&url.Error{Op: "Get", URL: "https://x", Err: &panicError{}},
	} {
		classifyQuickly(t, err)
		_ = Classify(Failure{Err: err, Message: "overloaded_error", Status: 529})
		_ = Classify(Failure{Err: err, Status: 400, Message: "Bad Request"})
	}
	got := classifyQuickly(t, errors.Join(&panicError{}, syscall.EPIPE))
	if got.Rule != "go.epipe" {
		t.Errorf("a panicking sibling hid EPIPE: %+v", got)
	}
}

func TestClassifyErrorNonComparable(t *testing.T) {
	l := listError{"a", "b"}
	got := classifyQuickly(t, errors.Join(l, l, fmt.Errorf("x: %w", l), context.DeadlineExceeded))
	if got.Rule != "go.deadline_exceeded" {
		t.Errorf("got %+v", got)
	}
}

func TestClassifyErrorIsAndAsMethods(t *testing.T) {
	got := classifyQuickly(t, fmt.Errorf("x: %w", isCanceled{}))
	if got.Class != Canceled {
		t.Errorf("Is method: %+v", got)
	}
	got = classifyQuickly(t, fmt.Errorf("x: %w", asDNS{}))
	want := Classification{Class: Transient, Reason: ReasonTimeout, Rule: "go.dns"}
	if diff := cmp.Diff(want, got, ignoreEvidence); diff != "" {
		t.Errorf("As method (-want +got):\n%s", diff)
	}
}

// TestClassifyErrorChain lists what the chain recognises.
func TestClassifyErrorChain(t *testing.T) {
	leaf := &x509.Certificate{}
	tests := []struct {
		name string
		err  error
		want Classification
	}{
		{"canceled", fmt.Errorf("post: %w", context.Canceled), Classification{Class: Canceled, Reason: ReasonAborted, Rule: "go.context_canceled"}},
		{"deadline", &url.Error{Op: "Post", URL: "https://x", Err: context.DeadlineExceeded},
			Classification{Class: Transient, Reason: ReasonTimeout, Rule: "go.deadline_exceeded"}},
		{"os deadline", &net.OpError{Op: "read", Err: os.ErrDeadlineExceeded}, Classification{Class: Transient, Reason: ReasonTimeout, Rule: "go.deadline_exceeded"}},
		{"reset", &net.OpError{Op: "read", Err: os.NewSyscallError("read", syscall.ECONNRESET)},
			Classification{Class: Transient, Reason: ReasonNetwork, Rule: "go.econnreset"}},
		{"refused", fmt.Errorf("dial: %w", syscall.ECONNREFUSED), Classification{Class: Transient, Reason: ReasonNetwork, Rule: "go.econnrefused"}},
		{"pipe", fmt.Errorf("write: %w", syscall.EPIPE), Classification{Class: Transient, Reason: ReasonNetwork, Rule: "go.epipe"}},
		{"aborted", syscall.ECONNABORTED, Classification{Class: Transient, Reason: ReasonNetwork, Rule: "go.econnaborted"}},
		{"etimedout", syscall.ETIMEDOUT, Classification{Class: Transient, Reason: ReasonTimeout, Rule: "go.etimedout"}},
		{"unreachable", syscall.ENETUNREACH, Classification{Class: Transient, Reason: ReasonNetwork, Rule: "go.unreachable"}},
		{"unexpected eof", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), Classification{Class: Transient, Reason: ReasonStream, Rule: "go.unexpected_eof"}},
		{"eof", io.EOF, Classification{Class: Transient, Reason: ReasonStream, Rule: "go.eof"}},
		{"net closed", net.ErrClosed, Classification{Class: Transient, Reason: ReasonNetwork, Rule: "go.net_closed"}},
		{"dns", &net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", Name: "x"}}, Classification{Class: Transient, Reason: ReasonNetwork, Rule: "go.dns"}},
		{"dns timeout", &net.DNSError{Err: "i/o timeout", Name: "x", IsTimeout: true}, Classification{Class: Transient, Reason: ReasonTimeout, Rule: "go.dns"}},
		{"net timeout", &url.Error{Op: "Get", URL: "https://x", Err: &nilDerefError{msg: "slow"}}, Classification{Class: Transient, Reason: ReasonTimeout, Rule: "go.net_timeout"}},
		{"op", &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("weird")}, Classification{Class: Transient, Reason: ReasonNetwork, Rule: "go.net_op"}},
		{"unknown authority", &url.Error{Op: "Post", URL: "https://x", Err: &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{Cert: leaf}}},
			Classification{Class: Permanent, Reason: ReasonInvalidRequest, Rule: "go.x509_unknown_authority"}},
		{"hostname", &tls.CertificateVerificationError{Err: x509.HostnameError{Certificate: leaf, Host: "api.example.com"}},
			Classification{Class: Permanent, Reason: ReasonInvalidRequest, Rule: "go.x509_hostname"}},
		{"expired", &tls.CertificateVerificationError{Err: x509.CertificateInvalidError{Cert: leaf, Reason: x509.Expired}},
			Classification{Class: Permanent, Reason: ReasonInvalidRequest, Rule: "go.x509_certificate_invalid"}},
		{"verification", &tls.CertificateVerificationError{Err: errors.New("custom verifier said no")},
			Classification{Class: Permanent, Reason: ReasonInvalidRequest, Rule: "go.tls_verification"}},
		{"not tls", fmt.Errorf("x: %w", tls.RecordHeaderError{Msg: notTLSMessage}),
			Classification{Class: Permanent, Reason: ReasonInvalidRequest, Rule: "go.not_tls"}},
		{"scheme mismatch", &url.Error{Op: "Get", URL: "https://x", Err: http.ErrSchemeMismatch},
			Classification{Class: Permanent, Reason: ReasonInvalidRequest, Rule: "go.not_tls"}},
		{"other record header errors are no certificate failure", tls.RecordHeaderError{Msg: "oversized record received with length 20000"},
			Classification{Class: Transient, Reason: ReasonNetwork, Rule: "transient.network"}},
		{"certificate beats the network op", &net.OpError{Op: "remote error", Err: x509.UnknownAuthorityError{}},
			Classification{Class: Permanent, Reason: ReasonInvalidRequest, Rule: "go.x509_unknown_authority"}},
		{"canceled beats the certificate", errors.Join(x509.UnknownAuthorityError{}, context.Canceled),
			Classification{Class: Canceled, Reason: ReasonAborted, Rule: "go.context_canceled"}},
		{"unsupported scheme by text", &url.Error{Op: "Post", URL: "/v1", Err: errors.New(`unsupported protocol scheme ""`)},
			Classification{Class: Permanent, Reason: ReasonInvalidRequest, Rule: "permanent.bad_url"}},
		{"redirects by text", &url.Error{Op: "Get", URL: "http://x", Err: errors.New("stopped after 10 redirects")},
			Classification{Class: Permanent, Reason: ReasonInvalidRequest, Rule: "permanent.redirect_loop"}},
		{"exhausted retries around a refused connection", fmt.Errorf("operation error S3: GetObject, exceeded maximum number of attempts, 3, %w", syscall.ECONNREFUSED),
			Classification{Class: Transient, Reason: ReasonNetwork, Rule: "go.econnrefused", RetriesExhausted: true}},
		{"exhausted retries by text alone", errors.New("exceeded maximum number of attempts, 3, https response error StatusCode: 500"),
			Classification{Class: Transient, Reason: ReasonServer, Rule: "status.5xx", RetriesExhausted: true}},
		{"exhausted retries never mark a cancel", fmt.Errorf("max retries exceeded: %w", context.Canceled),
			Classification{Class: Canceled, Reason: ReasonAborted, Rule: "go.context_canceled"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, classifyQuickly(t, tt.err), ignoreEvidence); diff != "" {
				t.Errorf("ClassifyError mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestClassifyRetriesExhaustedWithMessage checks that the message the host
// passes is read for the retry layer's wording when the chain decides.
func TestClassifyRetriesExhaustedWithMessage(t *testing.T) {
	f := Failure{Err: &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED},
		Message: "HTTPConnectionPool(host='localhost', port=11434): Max retries exceeded with url: /api/chat"}
	want := Classification{Class: Transient, Reason: ReasonNetwork, Rule: "go.econnrefused", RetriesExhausted: true}
	if diff := cmp.Diff(want, Classify(f), ignoreEvidence); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestWalkErrChainAllocs checks the walk allocates nothing for the chains
// the standard library builds, typed nils and joins included.
func TestWalkErrChainAllocs(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("allocation counts are measured without -race")
	}
	for _, err := range []error{
		&url.Error{Op: "Post", URL: "https://x", Err: &net.OpError{Op: "read", Err: os.NewSyscallError("read", syscall.ECONNRESET)}},
		&url.Error{Op: "Post", URL: "https://x", Err: &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}},
		errors.Join(nilOp, nilDNS, nilDeref, io.EOF),
		fmt.Errorf("a: %w", fmt.Errorf("b: %w", context.DeadlineExceeded)),
		&selfError{},
	} {
		if n := testing.AllocsPerRun(20, func() { _ = walkErrChain(err) }); n != 0 {
			t.Errorf("%T: %v allocs per walk", err, n)
		}
	}
}

func TestErrorTextRecovers(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want string
	}{
		{nil, ""}, {nilDeref, ""}, {&panicError{}, ""}, {errors.New("plain"), "plain"},
		{fmt.Errorf("x: %w", nilDeref), "x: <nil>"},
	} {
		if got := safeErrorText(tt.err); got != tt.want {
			t.Errorf("safeErrorText(%T) = %q, want %q", tt.err, got, tt.want)
		}
	}
}
