package genkit

import (
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/erradvisor/erradvisor"
	"github.com/firebase/genkit/go/core"
	"google.golang.org/genai"
)

// GeminiProvider is the provider id Failure puts in Failure.Provider for an
// error of the Gemini SDK (google.golang.org/genai), which the Google AI and
// Vertex AI plugins return. It enables erradvisor's Gemini rules.
const GeminiProvider = "gemini"

// retryInfoType is the type URL of google.rpc.RetryInfo in a status's
// details (https://cloud.google.com/apis/design/errors#error_details).
const retryInfoType = "type.googleapis.com/google.rpc.RetryInfo"

// Failure describes err, an error a Genkit model returned, as an
// erradvisor.Failure:
//
//   - a genai.APIError in err's chain (the googlegenai plugin passes the
//     Gemini SDK's errors on, wrapped with %w): Provider "gemini", Status the
//     HTTP code, Code the status name ("RESOURCE_EXHAUSTED",
//     "INVALID_ARGUMENT", ...), Message the error as the API's JSON body
//     ({"error":{"code","message","status","details"}}), and a
//     Retry-After-Ms header holding the google.rpc.RetryInfo retryDelay when
//     the details carry one;
//   - a *core.GenkitError: Status from its HTTPCode, else from its status
//     name (core.HTTPStatusCode), Code the status name, Message its message,
//     and a Retry-After-Ms header from a "retryDelay" value, or a
//     google.rpc.RetryInfo, in its Details;
//   - a *core.UserFacingError: Status from its status name, Code the name,
//     Message its message;
//   - anything else: only Message (err.Error()) and Err.
//
// Err is always err itself, so cancellations and network faults are
// classified from the Go error chain. At and Model are left for the host
// (the middleware sets them). A nil err gives the zero Failure.
func Failure(err error) erradvisor.Failure {
	if err == nil {
		return erradvisor.Failure{}
	}
	f := erradvisor.Failure{Message: err.Error(), Err: err}
	var ae genai.APIError
	var pae *genai.APIError
	if errors.As(err, &pae) && pae != nil {
		ae = *pae
	} else if !errors.As(err, &ae) {
		ae = genai.APIError{}
	}
	if ae.Code != 0 || ae.Status != "" || ae.Message != "" {
		f.Provider = GeminiProvider
		if ae.Code >= 400 {
			f.Status = ae.Code
		}
		f.Code = ae.Status
		if body, jerr := json.Marshal(struct {
			Error genai.APIError `json:"error"`
		}{ae}); jerr == nil {
			f.Message = string(body)
		}
		for _, d := range ae.Details {
			setRetryAfter(&f, d)
		}
		return f
	}
	var ge *core.GenkitError
	if errors.As(err, &ge) && ge != nil {
		f.Status = ge.HTTPCode
		if f.Status == 0 && ge.Status != "" {
			f.Status = core.HTTPStatusCode(ge.Status)
		}
		f.Code, f.Message = string(ge.Status), ge.Message
		setRetryAfter(&f, ge.Details)
		return f
	}
	var ue *core.UserFacingError
	if errors.As(err, &ue) && ue != nil {
		if ue.Status != "" {
			f.Status = core.HTTPStatusCode(ue.Status)
		}
		f.Code, f.Message = string(ue.Status), ue.Message
		setRetryAfter(&f, ue.Details)
	}
	return f
}

// setRetryAfter sets f's Retry-After-Ms header from the first retry delay
// found in details: its "retryDelay" value (a google.protobuf.Duration in
// JSON, such as "34s"), or that of a google.rpc.RetryInfo in its "details"
// list.
func setRetryAfter(f *erradvisor.Failure, details map[string]any) {
	if f.Header.Get("Retry-After-Ms") != "" {
		return
	}
	d, ok := retryDelay(details, 0)
	if !ok {
		return
	}
	if f.Header == nil {
		f.Header = http.Header{}
	}
	f.Header.Set("Retry-After-Ms", strconv.FormatInt(d.Milliseconds(), 10))
}

// retryDelay finds a retry delay in details, looking at most two levels
// down.
func retryDelay(details map[string]any, depth int) (time.Duration, bool) {
	if details == nil || depth > 2 {
		return 0, false
	}
	if s, ok := details["retryDelay"].(string); ok {
		if t, _ := details["@type"].(string); t == "" || t == retryInfoType {
			if d, ok := ParseDuration(s); ok {
				return d, true
			}
		}
	}
	list, _ := details["details"].([]any)
	for _, item := range list {
		if m, ok := item.(map[string]any); ok {
			if d, ok := retryDelay(m, depth+1); ok {
				return d, true
			}
		}
	}
	return 0, false
}

// ParseDuration parses a google.protobuf.Duration in its JSON form: decimal
// seconds with an "s" suffix ("34s", "0.5s", "91226.179915352s"), the form
// of google.rpc.RetryInfo's retryDelay. It reports false for anything else,
// for a negative value, and for one too large for a time.Duration.
func ParseDuration(s string) (time.Duration, bool) {
	num, ok := strings.CutSuffix(strings.TrimSpace(s), "s")
	if !ok || num == "" || num[0] == '-' || num[0] == '+' {
		return 0, false
	}
	for _, c := range num {
		if (c < '0' || c > '9') && c != '.' {
			return 0, false
		}
	}
	sec, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(sec) || sec < 0 || sec >= float64(math.MaxInt64)/float64(time.Second) {
		return 0, false
	}
	return time.Duration(sec * float64(time.Second)), true
}
