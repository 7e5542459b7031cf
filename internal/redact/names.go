package redact

// Secret-named parameters: a value is secret when its name, split into
// words at '_', '-', '.', digits and camel-case humps, ends in a secret
// word (optionally followed by a neutral word such as "id" or "value").
// "api_key", "X-Amz-Signature", "aws_secret_access_key", "SecretAccessKey",
// "sessionId" and "Ocp-Apim-Subscription-Key" are secret names; "max_tokens",
// "token_type", "promptTokenCount" and "monkey" are not.

// maxName bounds the name read before a separator.
const maxName = 64

// secretWords are the words that name a secret. The bool marks the words
// that do so on their own even in prose ("password: x"); the others
// ("key", "token", "session") do so alone only in a header or a
// structured field.
var secretWords = map[string]bool{
	"key": false, "token": false, "secret": true, "secrets": true,
	"password": true, "passwd": true, "pass": false, "pwd": true, "passphrase": true,
	"sig": false, "signature": true, "cookie": true, "authorization": true, "auth": false,
	"credential": true, "credentials": true, "session": false, "sessionid": true,
	"sessiontoken": true, "apikey": true, "accesskey": true, "secretkey": true,
	"privatekey": true, "accesstoken": true, "refreshtoken": true, "authtoken": true,
	"idtoken": true, "clientsecret": true, "jwt": false, "sid": false, "xsrf": false, "csrf": false,
}

// neutralTails may follow the secret word at the end of a name.
var neutralTails = map[string]bool{"id": true, "value": true, "b64": true, "base64": true, "str": true}

// nameKind classifies a parameter name: notSecret, weakSecret (a bare
// "key", "token", "session"...) or strongSecret.
type nameKind uint8

const (
	notSecret nameKind = iota
	weakSecret
	strongSecret
)

func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }
func isLower(c byte) bool { return 'a' <= c && c <= 'z' }
func isDigit(c byte) bool { return '0' <= c && c <= '9' }
func isAlnum(c byte) bool { return isUpper(c) || isLower(c) || isDigit(c) }

// isNameChar reports whether c may appear in a parameter or header name.
func isNameChar(c byte) bool { return isAlnum(c) || c == '_' || c == '-' || c == '.' }

// classifyName reports whether name names a secret. The name is read twice,
// split at camel-case humps and not: a capital inside a word ("api_kEY",
// "Access_tOKEN") may be odd casing rather than a hump, and either reading
// that finds a secret word makes the name secret.
func classifyName(name string) nameKind {
	return max(classifyWords(name, true), classifyWords(name, false))
}

// classifyWords is classifyName with camel-case humps read as word breaks or
// not.
func classifyWords(name string, humps bool) nameKind {
	if len(name) > maxName {
		name = name[len(name)-maxName:]
	}
	var buf [maxName]byte
	// The last two words of name, as spans of buf, and the word count.
	var last, prev [2]int
	count, start := 0, -1
	closeWord := func(end int) {
		if start >= 0 {
			prev, last = last, [2]int{start, end}
			count++
		}
		start = -1
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !isUpper(c) && !isLower(c) {
			closeWord(i)
			continue
		}
		if isUpper(c) {
			// A hump: aB followed by a letter, or the last capital of ABc.
			// A capital that ends the name ("Api_keY") starts no word.
			nextLetter := i+1 < len(name) && (isLower(name[i+1]) || isUpper(name[i+1]))
			if humps && start >= 0 && (isLower(name[i-1]) && nextLetter || (i+1 < len(name) && isLower(name[i+1]))) {
				closeWord(i)
			}
			c += 'a' - 'A'
		}
		if start < 0 {
			start = i
		}
		buf[i] = c
	}
	closeWord(len(name))
	if count == 0 {
		return notSecret
	}
	w := string(buf[last[0]:last[1]])
	if neutralTails[w] && count > 1 {
		w = string(buf[prev[0]:prev[1]])
	}
	strong, ok := secretWords[w]
	if !ok {
		if !hasStrongSuffix(w) {
			return notSecret
		}
		strong = true
	}
	if strong || count > 1 {
		return strongSecret
	}
	return weakSecret
}

// strongSuffixes end single-word names that hold a secret ("xapikey",
// "accesstoken", "userpassword").
var strongSuffixes = [...]string{"token", "secret", "password", "passwd", "apikey", "signature", "cookie", "credential", "credentials", "sessionid", "accesskey", "secretkey", "privatekey"}

func hasStrongSuffix(w string) bool {
	for _, s := range strongSuffixes {
		if len(w) > len(s) && w[len(w)-len(s):] == s {
			return true
		}
	}
	return false
}
