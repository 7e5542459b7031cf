package erradvisor

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
)

// classifyErrChain reads the strongest evidence there is: the Go error
// chain. It reports false when the chain holds nothing it recognises, and the
// text decides.
func classifyErrChain(err error) (Classification, bool) {
	mk := func(c Class, r Reason, rule string) (Classification, bool) {
		return Classification{Class: c, Reason: r, Rule: rule}, true
	}
	switch {
	case errors.Is(err, context.Canceled):
		return mk(Canceled, ReasonAborted, "go.context_canceled")
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return mk(Transient, ReasonTimeout, "go.deadline_exceeded")
	case errors.Is(err, syscall.ECONNRESET):
		return mk(Transient, ReasonNetwork, "go.econnreset")
	case errors.Is(err, syscall.ECONNREFUSED):
		return mk(Transient, ReasonNetwork, "go.econnrefused")
	case errors.Is(err, syscall.EPIPE):
		return mk(Transient, ReasonNetwork, "go.epipe")
	case errors.Is(err, syscall.ECONNABORTED):
		return mk(Transient, ReasonNetwork, "go.econnaborted")
	case errors.Is(err, syscall.ETIMEDOUT):
		return mk(Transient, ReasonTimeout, "go.etimedout")
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return mk(Transient, ReasonNetwork, "go.unreachable")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return mk(Transient, ReasonStream, "go.unexpected_eof")
	case errors.Is(err, io.EOF):
		return mk(Transient, ReasonStream, "go.eof")
	case errors.Is(err, net.ErrClosed):
		return mk(Transient, ReasonNetwork, "go.net_closed")
	}
	// errors.AsType keeps its target on the stack: no allocation per call.
	if dns, ok := errors.AsType[*net.DNSError](err); ok {
		if dns.IsTimeout {
			return mk(Transient, ReasonTimeout, "go.dns")
		}
		return mk(Transient, ReasonNetwork, "go.dns")
	}
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		return mk(Transient, ReasonTimeout, "go.net_timeout")
	}
	if _, ok := errors.AsType[*net.OpError](err); ok {
		return mk(Transient, ReasonNetwork, "go.net_op")
	}
	return Classification{}, false
}
