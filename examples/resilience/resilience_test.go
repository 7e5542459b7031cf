package resilience_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/erradvisor/erradvisor"
	"github.com/erradvisor/erradvisor/examples/resilience"
	"github.com/failsafe-go/failsafe-go"
	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
)

type fixture struct {
	Name     string            `yaml:"name"`
	Source   string            `yaml:"source"`
	Comment  string            `yaml:"comment"`
	Provider string            `yaml:"provider"`
	Status   int               `yaml:"status"`
	Headers  map[string]string `yaml:"headers"`
	Body     string            `yaml:"body"`
	Want     outcome           `yaml:"want"`
}

// outcome is what the hooks make of one failure.
type outcome struct {
	Retryable  bool   `yaml:"retryable"`
	Overflow   bool   `yaml:"overflow"`
	RetryAfter string `yaml:"retry_after"`
	Reset      string `yaml:"reset"`
	// Attempts the failsafe-go policy and backoff.Retry make when every
	// call fails this way (filled by the test from Retryable).
	FailsafeAttempts, BackoffAttempts int `yaml:"-"`
}

func fixtures(t *testing.T) []fixture {
	t.Helper()
	data, err := os.ReadFile("testdata/failures.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var fs []fixture
	if err := yaml.Unmarshal(data, &fs); err != nil {
		t.Fatal(err)
	}
	if len(fs) == 0 {
		t.Fatal("no fixtures")
	}
	return fs
}

func (f fixture) failure() erradvisor.Failure {
	h := http.Header{}
	for k, v := range f.Headers {
		h.Set(k, v)
	}
	return erradvisor.Failure{Provider: f.Provider, Status: f.Status, Message: f.Body, Header: h, At: observedAt}
}

// TestHooks runs every fixture through the predicates and through both
// libraries with an operation that always fails that way. The delays are
// replaced by tiny ones: what is checked is how often each library calls.
func TestHooks(t *testing.T) {
	for _, fx := range fixtures(t) {
		t.Run(fx.Name, func(t *testing.T) {
			if fx.Source == "" {
				t.Error("no source")
			}
			err := resilience.Classified(fx.failure())
			got := outcome{Retryable: erradvisor.IsRetryable(err), Overflow: erradvisor.IsOverflow(err)}
			if d := resilience.RetryAfter(err); d > 0 {
				got.RetryAfter = d.String()
			}
			if at, ok := erradvisor.QuotaReset(err); ok {
				got.Reset = at.UTC().Format(time.RFC3339)
			}

			// failsafe-go, with the server delay shortened so the test
			// stays fast.
			policy := resilience.RetryPolicyBuilder[string](2, time.Millisecond, 2*time.Millisecond).
				WithDelayFunc(func(failsafe.ExecutionAttempt[string]) time.Duration { return time.Millisecond }).
				Build()
			_, ferr := failsafe.With(policy).Get(func() (string, error) {
				got.FailsafeAttempts++
				return "", resilience.Classified(fx.failure())
			})
			var fe *erradvisor.Error
			if !errors.As(ferr, &fe) || ferr.Error() != err.Error() {
				t.Errorf("failsafe-go returned %v, not the call's error %v", ferr, err)
			}

			// backoff.Retry, with the stated wait dropped for speed.
			b := backoff.NewConstantBackOff(time.Millisecond)
			_, berr := backoff.Retry(context.Background(), func() (string, error) {
				got.BackoffAttempts++
				_, e := resilience.ForBackoff(func() (string, error) {
					return "", resilience.Classified(fx.failure())
				})()
				var ra *backoff.RetryAfterError
				if errors.As(e, &ra) {
					if ra.Duration.String() != fx.Want.RetryAfter {
						t.Errorf("RetryAfterError of %s, want %s", ra.Duration, fx.Want.RetryAfter)
					}
					ra.Duration = time.Millisecond
				}
				return "", e
			}, backoff.WithBackOff(b), backoff.WithMaxTries(3))
			var ae *erradvisor.Error
			if !errors.As(berr, &ae) {
				t.Errorf("backoff.Retry returned %v without the *erradvisor.Error", berr)
			}

			want := fx.Want
			want.FailsafeAttempts, want.BackoffAttempts = 1, 1
			if want.Retryable {
				want.FailsafeAttempts, want.BackoffAttempts = 3, 3
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestForBackoffKeepsResult checks that a value returned with an error
// passes through, and that a nil error is left alone.
func TestForBackoffKeepsResult(t *testing.T) {
	v, err := resilience.ForBackoff(func() (int, error) { return 7, nil })()
	if v != 7 || err != nil {
		t.Errorf("got %d, %v", v, err)
	}
	v, err = resilience.ForBackoff(func() (int, error) { return 3, context.Canceled })()
	var p *backoff.PermanentError
	if v != 3 || !errors.As(err, &p) || !errors.Is(err, context.Canceled) {
		t.Errorf("a cancellation gave %d, %v; want 3 and a permanent context.Canceled", v, err)
	}
}

func TestClassifiedWithoutErr(t *testing.T) {
	err := resilience.Classified(erradvisor.Failure{Message: "boom"})
	var e *erradvisor.Error
	if !errors.As(err, &e) || e.Err == nil || e.Err.Error() != "boom" {
		t.Errorf("Classified without Err = %#v", err)
	}
	if d := resilience.RetryAfter(nil); d != 0 {
		t.Errorf("RetryAfter(nil) = %s", d)
	}
}

// FuzzHooks checks, for any status and body, that the verdict travels with
// the error and that ForBackoff marks exactly the non-retryable errors as
// permanent and never shortens the original chain.
func FuzzHooks(f *testing.F) {
	for _, fx := range []erradvisor.Failure{overloaded, tpmLimit, rateLimited, insufficientQuota, promptTooLong, usageLimit} {
		f.Add(fx.Status, fx.Message, fx.Header.Get("Retry-After"))
	}
	f.Add(0, "", "")
	f.Fuzz(func(t *testing.T, status int, body, retryAfter string) {
		fl := erradvisor.Failure{Status: status, Message: body, Header: http.Header{"Retry-After": {retryAfter}}, At: observedAt}
		err := resilience.Classified(fl)
		var e *erradvisor.Error
		if !errors.As(err, &e) {
			t.Fatalf("Classified gave %T", err)
		}
		if d := resilience.RetryAfter(err); d < 0 {
			t.Fatalf("RetryAfter = %s", d)
		}
		_, berr := resilience.ForBackoff(func() (int, error) { return 0, err })()
		var p *backoff.PermanentError
		if got, want := errors.As(berr, &p), !erradvisor.IsRetryable(err); got != want {
			t.Fatalf("permanent = %v, want %v (verdict %+v)", got, want, e.Classification)
		}
		if !errors.Is(berr, err) {
			t.Fatalf("ForBackoff lost the original error: %v", berr)
		}
	})
}
