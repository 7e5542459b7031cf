package erradvisor

// Provider ids are compared after folding case and dropping everything but
// letters and digits ("Amazon-Bedrock" and "amazon_bedrock" are the same id),
// then mapping common aliases to one canonical id.

// providerAliases maps folded ids to canonical ids.
var providerAliases = map[string]string{
	"anthropic": "anthropic", "claude": "anthropic", "claudecode": "anthropic",

	"openai": "openai", "openairesponses": "openai", "openaicompletions": "openai",
	"codex": "openai", "openaicodex": "openai", "chatgpt": "openai",

	"azure": "azure", "azureopenai": "azure", "azureai": "azure", "azureopenairesponses": "azure",

	"bedrock": "bedrock", "amazonbedrock": "bedrock", "awsbedrock": "bedrock", "aws": "bedrock",

	// The gen_ai.provider.name values of OpenTelemetry's GenAI semantic
	// conventions (and the older gen_ai.system ones), folded:
	// https://opentelemetry.io/docs/specs/semconv/registry/attributes/gen-ai/
	// "aws.bedrock", "x_ai", "mistral_ai", "openai", "anthropic", "groq",
	// "deepseek" and "cohere" fold to ids above.
	"gcpgemini": "gemini", "gcpvertexai": "gemini", "gcpgenai": "gemini",
	"azureaiopenai": "azure", "azureaiinference": "azure", "azaiopenai": "azure", "azaiinference": "azure",
	"ibmwatsonxai": "watsonx", "watsonx": "watsonx", "watsonxai": "watsonx", "ibmwatsonx": "watsonx",
	"perplexity": "perplexity", "perplexityai": "perplexity",

	"gemini": "gemini", "google": "gemini", "googleai": "gemini", "googlegemini": "gemini",
	"vertex": "gemini", "vertexai": "gemini", "googlevertex": "gemini",
	"geminicli": "gemini", "googlegeminicli": "gemini", "geminicodeassist": "gemini",
	"antigravity": "gemini", "googleantigravity": "gemini",

	"mistral": "mistral", "mistralai": "mistral",
	"groq": "groq",
	"xai":  "xai", "grok": "xai",
	"deepseek":   "deepseek",
	"openrouter": "openrouter",
	"together":   "together", "togetherai": "together",
	"fireworks": "fireworks", "fireworksai": "fireworks",
	"cerebras": "cerebras",
	"cohere":   "cohere",

	"kimi": "kimi", "moonshot": "kimi", "moonshotai": "kimi", "kimicoding": "kimi", "kimiforcoding": "kimi",
	"zai": "zai", "zhipu": "zai", "zhipuai": "zai", "glm": "zai", "bigmodel": "zai", "zaicodingplan": "zai",
	"qwen": "qwen", "dashscope": "qwen", "alibaba": "qwen", "alibabacloud": "qwen", "aliyun": "qwen",
	"qwenportal": "qwen", "modelstudio": "qwen",
	"minimax": "minimax",

	"copilot": "copilot", "githubcopilot": "copilot",
	"litellm": "litellm",
	"ollama":  "ollama", "ollamacloud": "ollama",
	"llamacpp": "llamacpp", "llamaserver": "llamacpp",
	"vllm":     "vllm",
	"lmstudio": "lmstudio",
}

// foldProvider writes the folded form of p into buf and returns it. Ids
// longer than buf are cut, which only matters for ids no rule names.
func foldProvider(p string, buf []byte) []byte {
	n := 0
	for i := 0; i < len(p) && n < len(buf); i++ {
		c := p[i]
		switch {
		case c >= 'A' && c <= 'Z':
			buf[n] = c + 'a' - 'A'
			n++
		case c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
			buf[n] = c
			n++
		}
	}
	return buf[:n]
}

// canonicalProviderName returns the canonical id for p: its alias target, or
// its folded form for ids no alias names. It returns "" for an id without
// letters or digits.
func canonicalProviderName(p string) string {
	var buf [64]byte
	f := foldProvider(p, buf[:])
	if len(f) == 0 {
		return ""
	}
	if c, ok := providerAliases[string(f)]; ok {
		return c
	}
	return string(f)
}

// CanonicalProvider returns the canonical provider id the rules use for the
// host's id p: "amazon-bedrock" and "aws-bedrock" become "bedrock",
// "vertex" and "google" become "gemini", "moonshot" becomes "kimi", and so on.
// The gen_ai.provider.name values of OpenTelemetry's GenAI semantic
// conventions are understood too: "gcp.gemini", "gcp.vertex_ai" and
// "gcp.gen_ai" become "gemini", "azure.ai.openai" and "azure.ai.inference"
// become "azure", "aws.bedrock" becomes "bedrock", "x_ai" becomes "xai",
// "mistral_ai" becomes "mistral", "ibm.watsonx.ai" becomes "watsonx".
// Unknown ids come back folded to lower-case letters and digits.
func CanonicalProvider(p string) string { return canonicalProviderName(p) }

// sameProvider reports whether two provider ids name the same provider
// ("claude" and "anthropic" do), without allocating.
func sameProvider(a, b string) bool {
	var ba, bb [64]byte
	fa, fb := foldProvider(a, ba[:]), foldProvider(b, bb[:])
	ca, oka := providerAliases[string(fa)]
	cb, okb := providerAliases[string(fb)]
	switch {
	case oka && okb:
		return ca == cb
	case oka:
		return ca == string(fb)
	case okb:
		return string(fa) == cb
	}
	return string(fa) == string(fb)
}
