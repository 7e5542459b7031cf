package otel_test

import (
	"strings"
	"testing"
	"time"

	"github.com/erradvisor/erradvisor"
	advisor "github.com/erradvisor/erradvisor/adapters/otel"
	"go.opentelemetry.io/otel/attribute"
)

// FuzzProviderName checks that any host id gives a value made of
// lower-case letters, digits, dots and underscores, and that the value maps
// to itself.
func FuzzProviderName(f *testing.F) {
	for _, s := range []string{"anthropic", "Amazon-Bedrock", "vertex", "gcp.gen_ai", "azure.ai.inference", "x_ai", "", "..", "Ω"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		v := advisor.ProviderName(id)
		for i := 0; i < len(v); i++ {
			if c := v[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '_') {
				t.Fatalf("ProviderName(%q) = %q: byte %q", id, v, c)
			}
		}
		if again := advisor.ProviderName(v); again != v {
			t.Fatalf("ProviderName(%q) = %q, but ProviderName(%q) = %q", id, v, v, again)
		}
	})
}

// FuzzDecisionAttributes decides a failure with any status and body and
// checks that no attribute quotes the body: every value comes from a closed
// vocabulary, a number, or the host's provider and model ids.
func FuzzDecisionAttributes(f *testing.F) {
	f.Add(529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
	f.Add(400, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 219898 tokens > 200000 maximum"}}`)
	f.Add(401, `{"error":{"message":"Incorrect API key provided: sk-VKMIs****wjh3.","code":"invalid_api_key"}}`)
	f.Add(429, "You've hit your limit · resets 3pm (Europe/Paris)")
	f.Add(0, "")
	f.Add(309, `error"`) // a body that matches the JSON form of the finish reasons
	now := time.Date(2026, 3, 2, 15, 4, 5, 0, time.UTC)
	f.Fuzz(func(t *testing.T, status int, body string) {
		o := erradvisor.Outcome{Stop: erradvisor.StopError, Failure: erradvisor.Failure{
			Provider: "anthropic", Model: "m", Status: status, Message: body, At: now,
		}}
		d := erradvisor.NewSession(erradvisor.Persistent()).Decide(o, now)
		kv := append(advisor.OutcomeAttributes(o), advisor.DecisionAttributes(d)...)
		seen := map[string]bool{}
		for _, a := range kv {
			k := string(a.Key)
			if seen[k] {
				t.Fatalf("attribute %s set twice", k)
			}
			seen[k] = true
			v := a.Value.Emit()
			if len(v) > 100 {
				t.Fatalf("attribute %s = %q: too long for a low-cardinality value", k, v)
			}
			// A body of identifier characters could be a rule id or a
			// number by chance; any other body must not show up. A list
			// is judged by its items, not by its JSON form, whose quotes
			// and brackets a body can match by chance ('error"' in
			// '["error"]').
			items := []string{v}
			if a.Value.Type() == attribute.STRINGSLICE {
				items = a.Value.AsStringSlice()
			}
			for _, item := range items {
				if len(body) >= 6 && strings.ContainsFunc(body, notIdent) && strings.Contains(item, body) {
					t.Fatalf("attribute %s = %q quotes the body %q", k, v, body)
				}
			}
		}
		if !seen["erradvisor.action"] || !seen["erradvisor.cause"] || !seen["error.type"] || !seen["erradvisor.class"] {
			t.Fatalf("attributes %v lack the action, cause, error.type or class of a failure", kv)
		}
	})
}

func notIdent(r rune) bool {
	return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.' || r == '-')
}
