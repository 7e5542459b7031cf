package erradvisor

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"syscall"
)

// The Go error chain is read by a walk of its own rather than errors.Is and
// errors.As, which trust every error on the chain: they recurse without
// bound, loop forever on an error that unwraps to itself, and crash on a
// typed nil (a nil *net.OpError inside a non-nil error) whose methods
// dereference it. The walk here
//
//   - visits at most chainBudget errors, depth first and in the order
//     errors.Is would (an error, then what it unwraps to, the branches of a
//     join left to right), so a cyclic or exponential chain costs at most
//     that many steps;
//   - skips an error already visited (a join listing the same error twice, a
//     pointer that unwraps to itself);
//   - skips typed nils without calling a method on them;
//   - calls every method of the errors it meets (Error, Unwrap, Is, As,
//     Timeout) under a recover, so a buggy error type cannot crash the host;
//   - allocates nothing for the chains the standard library builds.
//
// What it recognises is what errors.Is and errors.As would have found
// anywhere on the chain, weighed in a fixed order (see classifyErrChain).

// chainBudget is the most errors one walk visits.
const chainBudget = 64

// Targets an error on the chain may equal (or report through an Is method).
const (
	tCanceled = iota
	tDeadline
	tOSDeadline
	tReset
	tRefused
	tPipe
	tAborted
	tTimedOut
	tHostUnreach
	tNetUnreach
	tUnexpectedEOF
	tEOF
	tNetClosed
	tSchemeMismatch
	numTargets
)

// chainTargets lists the sentinel values by their index above. It is never
// written.
var chainTargets = [numTargets]error{
	tCanceled:       context.Canceled,
	tDeadline:       context.DeadlineExceeded,
	tOSDeadline:     os.ErrDeadlineExceeded,
	tReset:          syscall.ECONNRESET,
	tRefused:        syscall.ECONNREFUSED,
	tPipe:           syscall.EPIPE,
	tAborted:        syscall.ECONNABORTED,
	tTimedOut:       syscall.ETIMEDOUT,
	tHostUnreach:    syscall.EHOSTUNREACH,
	tNetUnreach:     syscall.ENETUNREACH,
	tUnexpectedEOF:  io.ErrUnexpectedEOF,
	tEOF:            io.EOF,
	tNetClosed:      net.ErrClosed,
	tSchemeMismatch: http.ErrSchemeMismatch,
}

// Certificate and protocol failures found on the chain, most specific first.
const (
	certUnknownAuthority = 1 << iota
	certHostname
	certInvalid
	certVerification
	certNotTLS
)

// notTLSMessage is the RecordHeaderError message crypto/tls gives when the
// peer's first bytes are not a TLS record at all (crypto/tls/conn.go).
const notTLSMessage = "first record does not look like a TLS handshake"

// chainFacts is what one walk found.
type chainFacts struct {
	targets uint32 // bit i: chainTargets[i] is on the chain
	cert    uint8  // cert* bits
	// dnsSeen, dnsTimeout: the first *net.DNSError and its IsTimeout.
	dnsSeen, dnsTimeout bool
	// netSeen, netTimeout: the first net.Error and its Timeout().
	netSeen, netTimeout bool
	opErr               bool // a *net.OpError is on the chain
	// exhausted: an SDK's "retries exhausted" error type is on the chain.
	exhausted bool
	// textual: an error on the chain may carry text the rules should read
	// (anything but the structured errors of the standard library).
	textual bool
	// suspect: the walk met an error twice (a cycle, or a shared branch)
	// or ran out of budget. The chain's text is then not read: Error() of
	// a cyclic chain may recurse until the stack overflows, which no
	// recover catches, and a join nested in itself has text exponential in
	// its depth.
	suspect bool
	visited int // errors visited
}

func (f *chainFacts) has(t int) bool { return f.targets&(1<<t) != 0 }

// chainWalk is the walk's fixed-size state, kept on the caller's stack.
type chainWalk struct {
	stack [chainBudget]error
	n     int
	seen  [chainBudget]seenKey
	nseen int
}

// seenKey identifies a pointer-shaped error without comparing the errors
// themselves (== on two errors of the same non-comparable type panics).
type seenKey struct {
	t reflect.Type
	p uintptr
}

func (w *chainWalk) push(err error) {
	if err != nil && w.n < len(w.stack) {
		w.stack[w.n] = err
		w.n++
	}
}

// walkErrChain visits err and what it unwraps to, within chainBudget.
func walkErrChain(err error) chainFacts {
	var f chainFacts
	var w chainWalk
	w.push(err)
	for w.n > 0 && f.visited < chainBudget {
		w.n--
		e := w.stack[w.n]
		w.stack[w.n] = nil
		f.visited++
		if typedNil(e) {
			continue
		}
		if key, ok := identity(e); ok {
			if w.sawBefore(key) {
				f.suspect = true
				continue
			}
		}
		f.visit(e)
		// Children, pushed last first so the first is visited next.
		switch u := e.(type) {
		case interface{ Unwrap() error }:
			w.push(safeUnwrap(u))
		case interface{ Unwrap() []error }:
			kids := safeUnwrapAll(u)
			room := len(w.stack) - w.n
			if len(kids) > room {
				kids = kids[:room]
			}
			for i := len(kids) - 1; i >= 0; i-- {
				w.push(kids[i])
			}
		}
	}
	if w.n > 0 {
		f.suspect = true // budget spent with errors left to visit
	}
	return f
}

// sawBefore reports whether key was seen in this walk, and records it.
func (w *chainWalk) sawBefore(key seenKey) bool {
	for _, k := range w.seen[:w.nseen] {
		if k == key {
			return true
		}
	}
	if w.nseen < len(w.seen) {
		w.seen[w.nseen] = key
		w.nseen++
	}
	return false
}

// typedNil reports whether e holds a nil pointer (or another nil reference
// type), without calling any of its methods. reflect.ValueOf of an interface
// value does not allocate.
func typedNil(e error) bool {
	switch v := e.(type) {
	case *net.OpError:
		return v == nil
	case *url.Error:
		return v == nil
	case *net.DNSError:
		return v == nil
	case *os.SyscallError:
		return v == nil
	case syscall.Errno:
		return false
	}
	rv := reflect.ValueOf(e)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.UnsafePointer:
		return rv.IsNil()
	}
	return false
}

// identity returns a key for a pointer-shaped error: its dynamic type and
// address. Other errors have no identity to compare safely.
func identity(e error) (seenKey, bool) {
	rv := reflect.ValueOf(e)
	if rv.Kind() != reflect.Pointer {
		return seenKey{}, false
	}
	return seenKey{t: rv.Type(), p: rv.Pointer()}, true
}

// visit records what e itself is.
func (f *chainFacts) visit(e error) {
	sentinel := false
	for i, t := range chainTargets {
		// Comparing with a sentinel cannot panic: the sentinels' types are
		// comparable, and values of other types are simply unequal.
		if e == t {
			f.targets |= 1 << i
			sentinel = true
		}
	}
	structured := true
	switch v := e.(type) {
	case *net.DNSError:
		if !f.dnsSeen {
			f.dnsSeen, f.dnsTimeout = true, v.IsTimeout
		}
	case *net.OpError:
		f.opErr = true
	case *url.Error, *os.SyscallError, syscall.Errno, *net.AddrError, net.UnknownNetworkError,
		*net.ParseError, *os.PathError, *os.LinkError:
	case x509.UnknownAuthorityError, *x509.UnknownAuthorityError:
		f.cert |= certUnknownAuthority
	case x509.HostnameError, *x509.HostnameError:
		f.cert |= certHostname
	case x509.CertificateInvalidError, *x509.CertificateInvalidError:
		f.cert |= certInvalid
	case *tls.CertificateVerificationError:
		f.cert |= certVerification
	case tls.RecordHeaderError:
		if v.Msg == notTLSMessage {
			f.cert |= certNotTLS
		}
	case *tls.RecordHeaderError:
		if v.Msg == notTLSMessage {
			f.cert |= certNotTLS
		}
	default:
		structured = false
	}
	// A sentinel's text is fixed and says nothing more than the sentinel.
	if !structured && !sentinel {
		f.textual = true
		if isMaxAttemptsError(e) {
			f.exhausted = true
		}
	}
	if ne, ok := e.(net.Error); ok && !f.netSeen {
		f.netSeen, f.netTimeout = true, safeTimeout(ne)
	}
	if is, ok := e.(interface{ Is(error) bool }); ok {
		if _, errno := e.(syscall.Errno); !errno { // Errno.Is only maps to io/fs errors
			for i, t := range chainTargets {
				if f.targets&(1<<i) == 0 && safeIs(is, t) {
					f.targets |= 1 << i
				}
			}
		}
	}
	if as, ok := e.(interface{ As(any) bool }); ok {
		f.askAs(as)
	}
}

// askAs honours an As method for the types errors.As was asked for. It
// allocates, but only for the rare error types that have such a method.
func (f *chainFacts) askAs(as interface{ As(any) bool }) {
	var dns *net.DNSError
	if safeAs(as, &dns) && !typedNil(dns) && !f.dnsSeen {
		f.dnsSeen, f.dnsTimeout = true, dns.IsTimeout
	}
	var ne net.Error
	if safeAs(as, &ne) && ne != nil && !typedNil(ne) && !f.netSeen {
		f.netSeen, f.netTimeout = true, safeTimeout(ne)
	}
	var op *net.OpError
	if safeAs(as, &op) && op != nil {
		f.opErr = true
	}
}

// isMaxAttemptsError recognises aws-sdk-go-v2's *retry.MaxAttemptsError by
// its type's name and package, without depending on the SDK: its retryer
// returns it when every attempt failed ("exceeded maximum number of
// attempts", aws/retry/errors.go). With retries turned off (a maximum of one
// attempt) the SDK still wraps its single failure in one; that is no retry
// layer giving up, so an Attempt count of 1 or less does not count.
func isMaxAttemptsError(e error) bool {
	v := reflect.ValueOf(e)
	t := v.Type()
	if t.Kind() == reflect.Pointer {
		t, v = t.Elem(), v.Elem()
	}
	if t.Name() != "MaxAttemptsError" || t.PkgPath() != "github.com/aws/aws-sdk-go-v2/aws/retry" {
		return false
	}
	if t.Kind() == reflect.Struct {
		if a := v.FieldByName("Attempt"); a.IsValid() && a.CanInt() && a.Int() <= 1 {
			return false
		}
	}
	return true
}

// The foreign method calls, each under a recover. Open-coded defers cost a
// few nanoseconds and allocate nothing.

func safeUnwrap(u interface{ Unwrap() error }) (next error) {
	defer func() {
		if recover() != nil {
			next = nil
		}
	}()
	return u.Unwrap()
}

func safeUnwrapAll(u interface{ Unwrap() []error }) (next []error) {
	defer func() {
		if recover() != nil {
			next = nil
		}
	}()
	return u.Unwrap()
}

func safeIs(u interface{ Is(error) bool }, target error) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return u.Is(target)
}

func safeAs(u interface{ As(any) bool }, target any) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return u.As(target)
}

func safeTimeout(ne net.Error) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return ne.Timeout()
}

// safeErrorText returns err.Error(), or "" for a typed nil or an Error method
// that panics. Callers must not ask for the text of a suspect chain (see
// chainFacts.suspect).
func safeErrorText(err error) (s string) {
	if err == nil || typedNil(err) {
		return ""
	}
	defer func() {
		if recover() != nil {
			s = ""
		}
	}()
	return err.Error()
}

// classifyErrChain reads the strongest evidence there is: the Go error
// chain. It reports false when the chain holds nothing it recognises, and the
// text decides. facts is what the walk found, for the caller's use.
func classifyErrChain(err error) (cl Classification, ok bool, facts chainFacts) {
	f := walkErrChain(err)
	mk := func(c Class, r Reason, rule string) (Classification, bool, chainFacts) {
		return Classification{Class: c, Reason: r, Rule: rule, RetriesExhausted: f.exhausted}, true, f
	}
	switch {
	case f.has(tCanceled):
		return mk(Canceled, ReasonAborted, "go.context_canceled")
	// A certificate the client does not trust, or a peer that does not
	// speak TLS, fails the same way on every attempt. The class is
	// Permanent; the reason is invalid_request, the one permanent reason
	// that fits a wrong endpoint, proxy or trust store (auth would send the
	// user to their API key).
	case f.cert&certUnknownAuthority != 0:
		return mk(Permanent, ReasonInvalidRequest, "go.x509_unknown_authority")
	case f.cert&certHostname != 0:
		return mk(Permanent, ReasonInvalidRequest, "go.x509_hostname")
	case f.cert&certInvalid != 0:
		return mk(Permanent, ReasonInvalidRequest, "go.x509_certificate_invalid")
	case f.cert&certVerification != 0:
		return mk(Permanent, ReasonInvalidRequest, "go.tls_verification")
	case f.cert&certNotTLS != 0, f.has(tSchemeMismatch):
		return mk(Permanent, ReasonInvalidRequest, "go.not_tls")
	case f.has(tDeadline), f.has(tOSDeadline):
		return mk(Transient, ReasonTimeout, "go.deadline_exceeded")
	case f.has(tReset):
		return mk(Transient, ReasonNetwork, "go.econnreset")
	case f.has(tRefused):
		return mk(Transient, ReasonNetwork, "go.econnrefused")
	case f.has(tPipe):
		return mk(Transient, ReasonNetwork, "go.epipe")
	case f.has(tAborted):
		return mk(Transient, ReasonNetwork, "go.econnaborted")
	case f.has(tTimedOut):
		return mk(Transient, ReasonTimeout, "go.etimedout")
	case f.has(tHostUnreach), f.has(tNetUnreach):
		return mk(Transient, ReasonNetwork, "go.unreachable")
	case f.has(tUnexpectedEOF):
		return mk(Transient, ReasonStream, "go.unexpected_eof")
	case f.has(tEOF):
		return mk(Transient, ReasonStream, "go.eof")
	case f.has(tNetClosed):
		return mk(Transient, ReasonNetwork, "go.net_closed")
	case f.dnsSeen && f.dnsTimeout:
		return mk(Transient, ReasonTimeout, "go.dns")
	case f.dnsSeen:
		return mk(Transient, ReasonNetwork, "go.dns")
	case f.netSeen && f.netTimeout:
		return mk(Transient, ReasonTimeout, "go.net_timeout")
	case f.opErr:
		return mk(Transient, ReasonNetwork, "go.net_op")
	}
	return Classification{}, false, f
}
