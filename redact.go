package erradvisor

import "github.com/erradvisor/erradvisor/internal/redact"

// Redact returns s with every secret it finds replaced by the marker
// "[redacted]". It is the one redactor of this module: the notes apply it
// to every text they quote, the events to every error text they carry, and
// the command-line tool to everything it prints.
//
// It removes:
//   - API keys and tokens by their documented prefixes: OpenAI and
//     Anthropic (sk-, sk-proj-, sk-ant-), GitHub (ghp_, gho_, ghu_, ghs_,
//     ghr_, github_pat_), GitLab (glpat-), Hugging Face (hf_), Stripe
//     (sk_live_, rk_live_), Slack (xoxb-, xoxp-, ...), Google (AIza, ya29.),
//     AWS access key ids (AKIA, ASIA), npm (npm_), Groq, xAI, Replicate and
//     others;
//   - JSON Web Tokens (eyJ...);
//   - the credential after "Bearer " or "Basic ";
//   - the values of secret-named parameters in URLs, form bodies, headers
//     and JSON: names whose last word is key, token, secret, password,
//     passwd, pass, pwd, sig, signature, cookie, authorization, credential
//     or session, in any case and with '_', '-', '.' or camel-case words
//     (api_key, X-Api-Key, aws_secret_access_key, Ocp-Apim-Subscription-Key,
//     X-Amz-Signature, Set-Cookie, "accessToken");
//   - the values of command-line options that name a secret ("--password
//     v", "--token v") and the password of "-u user:password";
//   - the password of scheme://user:password@host, and the path of Slack,
//     Discord and Teams webhook URLs;
//   - the body of a PEM private key block, also when the block is cut.
//
// Non-secret labels stay readable: the parameter or header name, "Bearer ",
// the URL's user name, the BEGIN and END lines. Secrets written with URL
// escapes (%3D), JSON escapes (\u0070, \/, \"), invisible characters inside
// them, or split by a line break are found as well, and the whole written
// form is replaced. Ordinary prose ("max_tokens", "token count 5000",
// "tokens per minute") is left alone.
//
// Redact is linear in the length of s, safe for concurrent use, and
// idempotent: Redact(Redact(s)) == Redact(s).
func Redact(s string) string { return redact.String(s) }
