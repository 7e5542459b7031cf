package main

import (
	"regexp"
	"strings"
)

// redact removes secrets from a provider text before the command prints
// it: API keys in the sk- style (OpenAI sk-..., sk-proj-..., Anthropic
// sk-ant-...), bearer tokens after "Bearer", Google API keys (AIza...) and
// key or token parameters in URLs. Every provider text the command prints
// (replay, explain, and classify where it echoes text) goes through it.
//
// This is a minimal redaction. It must become a call to erradvisor.Redact,
// the library's redaction, once the root package has it.
func redact(s string) string {
	for _, r := range redactions {
		if r.maybe(s) {
			s = r.re.ReplaceAllString(s, r.with)
		}
	}
	return s
}

// redactions are the patterns redact replaces, in order, each with a cheap
// test that a text may hold one (most texts hold none). They are never
// changed after initialisation.
var redactions = []struct {
	maybe func(string) bool
	re    *regexp.Regexp
	with  string
}{
	{
		func(s string) bool { return strings.Contains(s, "sk-") },
		regexp.MustCompile(`\bsk-[A-Za-z0-9_\-]{8,}`), "[redacted]",
	},
	{
		func(s string) bool { return containsFold(s, "bearer") },
		regexp.MustCompile(`(?i)\b(bearer)\s+[A-Za-z0-9._~+/\-]{8,}=*`), "$1 [redacted]",
	},
	{
		func(s string) bool { return strings.Contains(s, "AIza") },
		regexp.MustCompile(`\bAIza[0-9A-Za-z_\-]{30,}`), "[redacted]",
	},
	{
		func(s string) bool { return strings.ContainsAny(s, "?&") && strings.Contains(s, "=") },
		regexp.MustCompile(`(?i)([?&](?:api[_-]?key|key|token|access_token)=)[^&\s"'` + "`" + `\\]+`), "${1}[redacted]",
	},
}

// containsFold reports whether s contains the lower-case ASCII word w in
// any case, without allocating.
func containsFold(s, w string) bool {
	for i := 0; i+len(w) <= len(s); i++ {
		if s[i]|0x20 == w[0] && strings.EqualFold(s[i:i+len(w)], w) {
			return true
		}
	}
	return false
}
