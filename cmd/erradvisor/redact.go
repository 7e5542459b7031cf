package main

import "regexp"

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
		s = r.re.ReplaceAllString(s, r.with)
	}
	return s
}

// redactions are the patterns redact replaces, in order. They are never
// changed after initialisation.
var redactions = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`\bsk-[A-Za-z0-9_\-]{8,}`), "[redacted]"},
	{regexp.MustCompile(`(?i)\b(bearer)\s+[A-Za-z0-9._~+/\-]{8,}=*`), "$1 [redacted]"},
	{regexp.MustCompile(`\bAIza[0-9A-Za-z_\-]{30,}`), "[redacted]"},
	{regexp.MustCompile(`(?i)([?&](?:api[_-]?key|key|token|access_token)=)[^&\s"'` + "`" + `]+`), "${1}[redacted]"},
}
