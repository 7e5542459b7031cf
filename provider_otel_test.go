package erradvisor

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCanonicalProviderOTel checks that the provider names of OpenTelemetry's
// GenAI semantic conventions reach the canonical ids the rules use, so a host
// that already labels its spans with gen_ai.provider.name (or the older
// gen_ai.system) can pass that value as Failure.Provider.
func TestCanonicalProviderOTel(t *testing.T) {
	// Source of the values: the gen_ai.provider.name enum,
	// https://opentelemetry.io/docs/specs/semconv/registry/attributes/gen-ai/
	// (semantic conventions v1.37 onwards, as go.opentelemetry.io/otel's
	// semconv/v1.40.0 declares them); the deprecated gen_ai.system values
	// "az.ai.openai", "az.ai.inference", "vertex_ai", "gemini" and "xai" of
	// earlier releases.
	tests := []struct {
		otel string
		want string
	}{
		{"openai", "openai"},
		{"gcp.gen_ai", "gemini"},
		{"gcp.vertex_ai", "gemini"},
		{"gcp.gemini", "gemini"},
		{"anthropic", "anthropic"},
		{"cohere", "cohere"},
		{"azure.ai.inference", "azure"},
		{"azure.ai.openai", "azure"},
		{"ibm.watsonx.ai", "watsonx"},
		{"aws.bedrock", "bedrock"},
		{"perplexity", "perplexity"},
		{"x_ai", "xai"},
		{"deepseek", "deepseek"},
		{"groq", "groq"},
		{"mistral_ai", "mistral"},
		// Deprecated gen_ai.system values.
		{"az.ai.openai", "azure"},
		{"az.ai.inference", "azure"},
		{"vertex_ai", "gemini"},
		{"gemini", "gemini"},
		{"xai", "xai"},
		// Case and separators do not matter.
		{"GCP.Vertex_AI", "gemini"},
		{"AWS.Bedrock", "bedrock"},
	}
	got := make(map[string]string, len(tests))
	want := make(map[string]string, len(tests))
	for _, tt := range tests {
		got[tt.otel] = CanonicalProvider(tt.otel)
		want[tt.otel] = tt.want
		if !sameProvider(tt.otel, tt.want) {
			t.Errorf("sameProvider(%q, %q) = false", tt.otel, tt.want)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CanonicalProvider of OpenTelemetry names (-want +got):\n%s", diff)
	}
}

// TestCanonicalProviderTargets checks that every canonical id is its own
// canonical id, so CanonicalProvider is idempotent.
func TestCanonicalProviderTargets(t *testing.T) {
	for alias, target := range providerAliases {
		if got := providerAliases[target]; got != target {
			t.Errorf("alias %q maps to %q, which maps to %q", alias, target, got)
		}
	}
}

func FuzzCanonicalProvider(f *testing.F) {
	for _, s := range []string{"gcp.vertex_ai", "azure.ai.openai", "ibm.watsonx.ai", "x_ai", "", "Ünïcode", "a.b.c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		c := CanonicalProvider(p)
		for i := 0; i < len(c); i++ {
			if b := c[i]; !(b >= 'a' && b <= 'z' || b >= '0' && b <= '9') {
				t.Fatalf("CanonicalProvider(%q) = %q: byte %q is not a lower-case letter or digit", p, c, b)
			}
		}
		if again := CanonicalProvider(c); again != c {
			t.Fatalf("CanonicalProvider(%q) = %q, but CanonicalProvider(%q) = %q", p, c, c, again)
		}
		if c != "" && !sameProvider(p, c) {
			t.Fatalf("sameProvider(%q, %q) = false", p, c)
		}
	})
}
