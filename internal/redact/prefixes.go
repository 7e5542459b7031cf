package redact

import "strings"

// keyPrefix is the documented start of a vendor's API key or token. A
// token that starts with it at a word boundary and has at least minBody
// more key characters is a secret.
type keyPrefix struct {
	prefix  string
	minBody int
	dots    bool // the body may hold '.'
	slashes bool // the body may hold '/' (a URL path)
}

// keyPrefixes lists the prefixes; the sources are in
// testdata/redact/shapes.yaml.
var keyPrefixes = [...]keyPrefix{
	{"sk-", 10, false, false},         // OpenAI (sk-, sk-proj-, sk-svcacct-), Anthropic (sk-ant-), OpenRouter (sk-or-), DeepSeek
	{"sk_live_", 10, false, false},    // Stripe secret key
	{"sk_test_", 10, false, false},    // Stripe test secret key
	{"rk_live_", 10, false, false},    // Stripe restricted key
	{"rk_test_", 10, false, false},    // Stripe restricted test key
	{"whsec_", 10, false, false},      // Stripe webhook secret
	{"ghp_", 20, false, false},        // GitHub personal access token (classic)
	{"gho_", 20, false, false},        // GitHub OAuth token
	{"ghu_", 20, false, false},        // GitHub user-to-server token
	{"ghs_", 20, false, false},        // GitHub server-to-server token
	{"ghr_", 20, false, false},        // GitHub refresh token
	{"github_pat_", 20, false, false}, // GitHub fine-grained token
	{"glpat-", 16, false, false},      // GitLab personal access token
	{"gldt-", 16, false, false},       // GitLab deploy token
	{"glrt-", 16, false, false},       // GitLab runner token
	{"glptt-", 16, false, false},      // GitLab pipeline trigger token
	{"hf_", 20, false, false},         // Hugging Face user access token
	{"xoxb-", 10, false, false},       // Slack bot token
	{"xoxp-", 10, false, false},       // Slack user token
	{"xoxa-", 10, false, false},       // Slack app token (legacy)
	{"xoxr-", 10, false, false},       // Slack refresh token
	{"xoxs-", 10, false, false},       // Slack session token
	{"xoxe.", 10, true, false},        // Slack rotating token
	{"xoxe-", 10, false, false},       // Slack refresh token (rotation)
	{"xapp-", 10, false, false},       // Slack app-level token
	{"AIza", 20, false, false},        // Google API key
	{"ya29.", 20, true, false},        // Google OAuth 2.0 access token
	{"GOCSPX-", 16, false, false},     // Google OAuth client secret
	{"AKIA", 12, false, false},        // AWS access key id
	{"ASIA", 12, false, false},        // AWS temporary (STS) access key id
	{"ABIA", 12, false, false},        // AWS STS service bearer token
	{"ACCA", 12, false, false},        // AWS context-specific credential
	{"npm_", 20, false, false},        // npm access token
	{"pypi-", 20, false, false},       // PyPI API token
	{"gsk_", 10, false, false},        // Groq
	{"xai-", 10, false, false},        // xAI
	{"r8_", 20, false, false},         // Replicate
	{"pplx-", 20, false, false},       // Perplexity
	{"nvapi-", 20, false, false},      // NVIDIA NIM
	{"csk-", 20, false, false},        // Cerebras
	{"tvly-", 20, false, false},       // Tavily
	{"jina_", 20, false, false},       // Jina AI
	{"dop_v1_", 20, false, false},     // DigitalOcean personal access token
	{"doo_v1_", 20, false, false},     // DigitalOcean OAuth token
	{"shpat_", 20, false, false},      // Shopify admin API access token
	{"shpss_", 20, false, false},      // Shopify shared secret
	{"SG.", 16, true, false},          // SendGrid API key
	{"glc_", 20, false, false},        // Grafana Cloud access policy token
	{"glsa_", 20, false, false},       // Grafana service account token
	{"lin_api_", 20, false, false},    // Linear API key
	{"ATATT", 20, false, false},       // Atlassian API token
	{"xkeysib-", 20, false, false},    // Brevo (Sendinblue) API key
	{"sq0atp-", 16, false, false},     // Square access token
	{"sq0csp-", 16, false, false},     // Square OAuth secret
	{"figd_", 20, false, false},       // Figma personal access token
	{"ntn_", 20, false, false},        // Notion integration token
	{"dapi", 24, false, false},        // Databricks personal access token
	{"LTAI", 12, false, false},        // Alibaba Cloud AccessKey id

	// Webhook URLs whose path is the secret.
	{"hooks.slack.com/services/", 20, false, true},    // Slack incoming webhook
	{"discord.com/api/webhooks/", 20, false, true},    // Discord webhook
	{"discordapp.com/api/webhooks/", 20, false, true}, // Discord webhook (old host)
	{"outlook.office.com/webhook/", 20, false, true},  // Microsoft Teams connector
}

// prefixesByFirst indexes keyPrefixes by first byte.
var prefixesByFirst = func() (t [128][]keyPrefix) {
	for _, p := range keyPrefixes {
		t[p.prefix[0]] = append(t[p.prefix[0]], p)
	}
	return t
}()

// accepts returns the test for the characters of the key's body.
func (p keyPrefix) accepts() func(byte) bool {
	switch {
	case p.dots:
		return isKeyOrDot
	case p.slashes:
		return isKeyOrSlash
	}
	return isKeyChar
}

// startsKey reports whether a vendor's key that the prefix detector will
// redact starts at t[k]: its prefix, then at least minBody characters of
// body, counted across wrapped lines as run counts them. The next line of a
// wrapped run that starts such a key is that key, not more of the key
// before; a line that starts with a prefix but is too short to be a key on
// its own stays part of the run, so that it is redacted with it.
func startsKey(t string, k int) bool {
	if t[k] >= 128 {
		return false
	}
	for _, p := range prefixesByFirst[t[k]] {
		if strings.HasPrefix(t[k:], p.prefix) && reaches(t, k+len(p.prefix), p.accepts(), p.minBody) {
			return true
		}
	}
	return false
}

// reaches reports whether at least need characters accepted by ok follow
// t[i], carried across line breaks as run carries them. It stops as soon as
// it has counted need, so a call reads fewer than need characters before
// the last line it looks at, and that line once.
func reaches(t string, i int, ok func(byte) bool, need int) bool {
	n, j := 0, i
	for {
		for j < len(t) && ok(t[j]) {
			if n++; n >= need {
				return true
			}
			j++
		}
		k, more := wrapped(t, j, ok)
		if !more {
			return false
		}
		j = k
	}
}
