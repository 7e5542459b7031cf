package redact

import (
	"strings"
)

// span is a half-open byte range.
type span struct{ start, end int }

// keepSpan is the END line of a PEM block, kept visible inside the block's
// redaction; begin is where the block's BEGIN line starts. A secret that
// also covers the BEGIN line (a quoted value holding the whole block) takes
// the END line with it, so that a second pass finds nothing more to hide.
type keepSpan struct {
	span
	begin int
}

// scanner finds the secrets of a decoded text. Every detector runs at
// every position, independently of the others, and remembers where its
// last match ended so that no byte is read twice by the same detector:
// the scan is linear in the text.
type scanner struct {
	t     string
	spans []span
	// Where each detector may next start a match.
	prefixFrom, jwtFrom, authFrom, urlFrom, pemFrom int
	// ends remembers, per kind of value, the last value read: a
	// separator inside it reads the same end without reading it again.
	ends [numEnds]span
	// keep are the END lines of PEM blocks, which stay even inside
	// another secret so that the block still reads as closed.
	keep []keepSpan
}

func (sc *scanner) add(start, end int) {
	// A span never ends inside a marker of an earlier redaction: the
	// marker goes whole, and redacting again changes nothing.
	for m := max(start, end-len(Marker)+1); m < end; m++ {
		if strings.HasPrefix(sc.t[m:], Marker) {
			end = m + len(Marker)
			break
		}
	}
	if end > start {
		sc.spans = append(sc.spans, span{start, end})
	}
}

// scan returns the secret spans of t, in no particular order, and the
// spans that must stay, in order.
func scan(t string) (secrets []span, keep []keepSpan) {
	sc := scanner{t: t}
	for i := 0; i < len(t); i++ {
		c := t[i]
		boundary := i == 0 || !isAlnum(t[i-1])
		switch {
		case c == '=' || c == ':':
			sc.param(i)
			if c == ':' && i >= sc.urlFrom && strings.HasPrefix(t[i:], "://") {
				sc.userinfo(i)
			}
			continue
		case c == '-':
			if i >= sc.pemFrom && strings.HasPrefix(t[i:], pemBegin) {
				sc.pem(i)
			}
			if (i == 0 || t[i-1] == ' ' || t[i-1] == '\t') && i+1 < len(t) {
				sc.flag(i)
			}
		}
		if !boundary || c >= 128 {
			continue
		}
		if i >= sc.prefixFrom {
			sc.prefix(i)
		}
		if c == 'e' && i >= sc.jwtFrom && strings.HasPrefix(t[i:], "eyJ") {
			sc.jwt(i)
		}
		if (c == 'b' || c == 'B') && i >= sc.authFrom {
			sc.scheme(i)
		}
	}
	return sc.spans, sc.keep
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// isKeyChar reports whether c may appear in an API key.
func isKeyChar(c byte) bool { return isAlnum(c) || c == '_' || c == '-' }

func isKeyOrDot(c byte) bool { return isKeyChar(c) || c == '.' }

func isKeyOrSlash(c byte) bool { return isKeyChar(c) || c == '/' || c == '@' }

// isTokenChar reports whether c may appear in a bearer or basic credential
// (RFC 6750's b64token) or a JWT.
func isTokenChar(c byte) bool {
	return isKeyChar(c) || c == '.' || c == '~' || c == '+' || c == '/' || c == '='
}

// looksRandom reports whether s reads as generated rather than as a word
// or a placeholder: it holds a digit, a capital after a small letter, or,
// in a run of at least eight characters, a symbol with letters of both
// cases ("YOUR_KEY" and "x-request-id" are not random).
func looksRandom(s string) bool {
	sym, lower, upper := false, false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case isDigit(c):
			return true
		case isUpper(c):
			if i > 0 && isLower(s[i-1]) {
				return true
			}
			upper = true
		case isLower(c):
			lower = true
		default:
			sym = true
		}
	}
	return sym && lower && upper && len(s) >= 8
}

// run returns the end of the run of characters accepted by ok from i, with
// the run carried across single line breaks (\n or \r\n) while the text
// after the break also looks random: a key that a terminal or a log wrapped
// is still one key. n counts the accepted characters.
func run(t string, i int, ok func(byte) bool) (end, n int) {
	j := i
	for {
		for j < len(t) && ok(t[j]) {
			j++
			n++
		}
		k, more := wrapped(t, j, ok)
		if !more || startsKey(t, k) {
			return j, n
		}
		j = k
	}
}

// wrapped reports whether the run that ends at t[j] goes on after a line
// break: a single \n or \r\n, then a run of characters accepted by ok
// that looks random. k is where that next run starts.
func wrapped(t string, j int, ok func(byte) bool) (k int, more bool) {
	k = j
	if k < len(t) && t[k] == '\r' {
		k++
	}
	if k >= len(t) || t[k] != '\n' {
		return k, false
	}
	k++
	e := k
	for e < len(t) && ok(t[e]) {
		e++
	}
	return k, e > k && looksRandom(t[k:e])
}

// trimDots drops trailing dots from t[i:end]: the end of a sentence, not of
// the token.
func trimDots(t string, i, end int) int {
	for end > i && t[end-1] == '.' {
		end--
	}
	return end
}

// prefix redacts a key that starts with a known vendor prefix at i.
func (sc *scanner) prefix(i int) {
	t := sc.t
	for _, p := range prefixesByFirst[t[i]] {
		if !strings.HasPrefix(t[i:], p.prefix) {
			continue
		}
		b := i + len(p.prefix)
		end, _ := run(t, b, p.accepts())
		end = trimDots(t, b, end)
		if countKey(t[b:end]) >= p.minBody {
			sc.add(i, end)
			sc.prefixFrom = end
			return
		}
	}
}

// countKey counts the characters of s that are not line breaks.
func countKey(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] != '\n' && s[i] != '\r' {
			n++
		}
	}
	return n
}

// jwt redacts a JSON Web Token: eyJ, then three base64url parts joined by
// dots.
func (sc *scanner) jwt(i int) {
	t := sc.t
	j, _ := run(t, i, isKeyOrDot)
	sc.jwtFrom = j
	if strings.Count(t[i:j], ".") >= 2 {
		sc.add(i, trimDots(t, i, j))
	}
}

// hasPrefixFold reports whether t[i:] starts with the lower-case ASCII p,
// ignoring case.
func hasPrefixFold(t string, i int, p string) bool {
	if len(t)-i < len(p) {
		return false
	}
	for k := 0; k < len(p); k++ {
		c := t[i+k]
		if isUpper(c) {
			c += 'a' - 'A'
		}
		if c != p[k] {
			return false
		}
	}
	return true
}

// minCredential is the shortest credential read after "Bearer " or
// "Basic ".
const minCredential = 8

// scheme redacts the credential after the HTTP authentication schemes
// Bearer and Basic, keeping the scheme's name.
func (sc *scanner) scheme(i int) {
	t := sc.t
	var word string
	switch {
	case hasPrefixFold(t, i, "bearer"):
		word = "bearer"
	case hasPrefixFold(t, i, "basic"):
		word = "basic"
	default:
		return
	}
	k := schemeGap(t, i+len(word))
	if k < 0 {
		return
	}
	// A scheme written twice ("Bearer Bearer x", a common slip) names the
	// credential after its second word.
	if hasPrefixFold(t, k, word) {
		if k2 := schemeGap(t, k+len(word)); k2 >= 0 {
			k = k2
		}
	}
	end, n := run(t, k, isTokenChar)
	sc.authFrom = max(end, k)
	val := t[k:end]
	if n < minCredential {
		return
	}
	if !looksRandom(val) && (word == "basic" || n < 16) {
		return // a word: "basic authentication", "bearer tokens"
	}
	sc.add(k, end)
}

// schemeGap returns where the credential after a scheme's name starts: past
// the 1 to 16 blanks at t[ws:], or -1 when there are none or nothing
// follows them.
func schemeGap(t string, ws int) int {
	k := ws
	for k < len(t) && k-ws < 16 && isSpace(t[k]) {
		k++
	}
	if k == ws || k >= len(t) {
		return -1
	}
	return k
}

const pemBegin = "-----BEGIN "

// pem redacts the body of a PEM private key block, keeping its BEGIN and
// END lines; a block without its END line is redacted to the end of the
// text.
func (sc *scanner) pem(i int) {
	t := sc.t
	ls := i + len(pemBegin)
	// The label runs to the next "-----" on its line however long it is:
	// a bound on its length would let the redaction of a secret inside the
	// label shorten it under the bound, so that a second pass found a block
	// the first did not. Each search stops at the next "-----", where any
	// later BEGIN line starts, so the scan stays linear.
	le := strings.Index(t[ls:], "-----")
	if le < 0 || strings.IndexByte(t[ls:ls+le], '\n') >= 0 || !strings.Contains(t[ls:ls+le], "PRIVATE KEY") {
		return
	}
	body := ls + le + len("-----")
	end := len(t)
	if e := strings.Index(t[body:], "-----END"); e >= 0 {
		end = body + e
		sc.keep = append(sc.keep, keepSpan{span{end, end + len("-----END")}, i})
	}
	sc.add(body, end)
	sc.pemFrom = end
}

// Bounds on the user name and password read in a URL's user information.
const (
	maxUser     = 64
	maxPassword = 128
)

// userinfo redacts the password of scheme://user:password@host at i, the
// "://". A password holding '/', '?' or '#' (which should have been
// escaped) is redacted too, unless what follows the colon is a port.
func (sc *scanner) userinfo(i int) {
	t := sc.t
	start := i + 3
	u := start
	for u < len(t) && u-start < maxUser && !isSpace(t[u]) && !isAuthoritySep(t[u]) {
		u++
	}
	if u >= len(t) || t[u] != ':' {
		return
	}
	at, atAuthority, slash, broken := -1, -1, -1, false
	for e := u + 1; e < len(t) && e-u < maxPassword && !isQuoteOrAngle(t[e]); e++ {
		if isSpace(t[e]) {
			// One line break may wrap a password that is not over yet.
			if e+1 < len(t) && t[e] == '\r' && t[e+1] == '\n' {
				e++
			}
			if t[e] != '\n' || broken || at >= 0 || allDigits(t[u+1:e]) {
				break
			}
			broken = true
			continue
		}
		switch t[e] {
		case '@':
			at = e
			if slash < 0 {
				atAuthority = e
			}
		case '/', '?', '#':
			if slash < 0 {
				slash = e
			}
		}
	}
	switch {
	case atAuthority >= 0:
		at = atAuthority
	case at < 0:
		return
	case allDigits(t[u+1 : slash]):
		return // a port, and the '@' is in the path
	}
	if at > u+1 {
		sc.add(u+1, at)
		sc.urlFrom = at
	}
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// isValueEnd reports whether the value of a URL or form parameter ends
// before t[e]: at a hard delimiter, or at a closing or separating
// punctuation mark that another delimiter or the end of the text follows.
func isValueEnd(t string, e int) bool {
	switch t[e] {
	case ' ', '\t', '\n', '\r', '&', ';', '"', '\'', '`', '<', '>':
		return true
	case ',', ')', ']', '}', '.':
		return e+1 >= len(t) || isValueEnd(t, e+1)
	}
	return false
}

// isFieldEnd is isValueEnd for the value of a header or a "name: value"
// field, which may hold '&' and in which ';' ends the value only before a
// blank.
func isFieldEnd(t string, e int) bool {
	switch t[e] {
	case ' ', '\t', '\n', '\r', '"', '\'', '`', '<', '>':
		return true
	case ',', ';', ')', ']', '}', '.':
		return e+1 >= len(t) || isFieldEnd(t, e+1)
	}
	return false
}

// valueEnd returns the end of the unquoted value that starts at k; isEnd
// tells where it ends.
func valueEnd(t string, k int, isEnd func(string, int) bool) int {
	e := k
	for {
		for e < len(t) && !isEnd(t, e) {
			e++
		}
		// A value wrapped by a line break goes on when the next line
		// starts with more of it.
		j := e
		if j < len(t) && t[j] == '\r' {
			j++
		}
		if e == k || j >= len(t) || t[j] != '\n' {
			return e
		}
		j++
		c := j
		for c < len(t) && !isEnd(t, c) {
			c++
		}
		if c == j || !looksRandom(t[j:c]) {
			return e
		}
		e = c
	}
}

// lineEnd returns the end of the line, or of the quoted string, from k. A
// line break does not end it when the next line starts with more of a
// wrapped credential rather than with a header name.
func lineEnd(t string, k int) int {
	e := k
	for {
		for e < len(t) && t[e] != '\n' && t[e] != '\r' && (t[e] == '\'' || !isQuoteOrAngle(t[e])) {
			e++
		}
		j := e
		if j < len(t) && t[j] == '\r' {
			j++
		}
		if j >= len(t) || t[j] != '\n' {
			break
		}
		j++
		c := j
		for c < len(t) && !isSpace(t[c]) && (t[c] == '\'' || !isQuoteOrAngle(t[c])) {
			c++
		}
		if c == j || t[c-1] == ':' && headerName(t[j:c-1]) || !looksRandom(t[j:c]) {
			break
		}
		e = c
	}
	for e > k && (t[e-1] == ' ' || t[e-1] == '\t') {
		e--
	}
	return e
}

// headerName reports whether s reads as an HTTP header name ("X-Api-Key",
// "Set-Cookie"): letters, digits and '-' only, and not a generated token.
func headerName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isLower(c) && !isUpper(c) && !isDigit(c) && c != '-' {
			return false
		}
	}
	return !looksRandom(s)
}

// wholeLine are the header names whose value runs to the end of the line.
var wholeLine = [...]string{"authorization", "proxy-authorization", "cookie", "set-cookie"}

// param redacts the value of a secret-named parameter: ?api_key=v,
// password = v, "token": "v", X-Api-Key: v, Cookie: v. sep, at i, is '='
// or ':'.
func (sc *scanner) param(i int) {
	t := sc.t
	sep := t[i]
	if sep == '=' && (i+1 < len(t) && t[i+1] == '=' || i > 0 && strings.ContainsRune("=!<>", rune(t[i-1]))) {
		return // a comparison
	}
	if sep == ':' && (i+1 < len(t) && t[i+1] == ':' || strings.HasPrefix(t[i:], "://")) {
		return
	}
	// The name, possibly quoted and followed by blanks.
	j := i
	for j > 0 && i-j < 8 && (t[j-1] == ' ' || t[j-1] == '\t') {
		j--
	}
	if j > 0 && (t[j-1] == '"' || t[j-1] == '\'') {
		j--
	}
	ne := j
	for j > 0 && ne-j < maxName && isNameChar(t[j-1]) {
		j--
	}
	if j == ne {
		return
	}
	name := t[j:ne]
	kind := classifyName(name)
	if kind == notSecret {
		return
	}
	// The value.
	k := i + 1
	for k < len(t) && k-i < 16 && (t[k] == ' ' || t[k] == '\t') {
		k++
	}
	if k >= len(t) {
		return
	}
	switch q := t[k]; q {
	case '"', '\'':
		e := sc.end(endQuote+int(q&1), k+1, func() int { return quotedEnd(t, k+1, q) })
		s := k + 1
		if isWholeLine(name) && !isCookieName(name) {
			s = skipScheme(t, s, e)
		}
		sc.add(s, e)
		return
	case '{', '[':
		return
	}
	header := sep == ':' && atLineStart(t, j)
	if sep == ':' && isWholeLine(name) {
		if header || isCookieName(name) {
			e := sc.end(endLine, k, func() int { return lineEnd(t, k) })
			if !isCookieName(name) {
				k = skipScheme(t, k, e)
			}
			sc.add(k, e)
			return
		}
		// "Authorization: Bearer x" inside running text: the scheme,
		// then one credential.
		k = skipScheme(t, k, len(t))
		if e := valueEnd(t, k, isFieldEnd); e > k && looksRandom(t[k:min(e, k+64)]) {
			sc.add(k, e)
		}
		return
	}
	isEnd, kindEnd := isValueEnd, endValue
	if sep == ':' {
		isEnd, kindEnd = isFieldEnd, endField
	}
	if isEnd(t, k) {
		return
	}
	e := sc.end(kindEnd, k, func() int { return valueEnd(t, k, isEnd) })
	if e == k {
		return
	}
	if sep == ':' && !fieldSecret(kind, header, t[k:e]) {
		return
	}
	sc.add(k, e)
}

// atLineStart reports whether only blanks precede t[j] on its line.
func atLineStart(t string, j int) bool {
	for j > 0 && (t[j-1] == ' ' || t[j-1] == '\t') {
		j--
	}
	return j == 0 || t[j-1] == '\n' || t[j-1] == '\r'
}

func isWholeLine(name string) bool {
	for _, w := range wholeLine {
		if strings.EqualFold(name, w) {
			return true
		}
	}
	return false
}

func isCookieName(name string) bool {
	return strings.EqualFold(name, "cookie") || strings.EqualFold(name, "set-cookie")
}

// skipScheme returns where the credentials of the Authorization value
// t[k:e] begin: after its scheme ("Bearer ", "Basic ", "token ") when it
// names one.
func skipScheme(t string, k, e int) int {
	s := k
	for s < e && s-k < 24 && (isAlnum(t[s]) || t[s] == '-') {
		s++
	}
	if s > k && s < e && t[s] == ' ' {
		return s + 1
	}
	return k
}

// fieldSecret reports whether the unquoted value v of a "name: value" field
// is redacted. In prose such a field often is not a secret ("token:
// expired", "password: required"): a bare key, token or session word needs
// a value that looks generated, and longer than a word unless the field
// starts its line; a name that only a secret has ("password",
// "api_key") needs a value that is not a lower-case word, unless the field
// starts its line.
func fieldSecret(kind nameKind, header bool, v string) bool {
	if kind == weakSecret {
		// The start of the value tells: a long value shared by nested
		// separators is not read again for each.
		return looksRandom(v[:min(len(v), 64)]) && (header || len(v) >= minCredential)
	}
	return header || !isWord(v)
}

// isWord reports whether v is a lower-case word.
func isWord(v string) bool {
	for i := 0; i < len(v); i++ {
		if !isLower(v[i]) {
			return false
		}
	}
	return true
}

// quotedEnd returns the end of the quoted value that starts at k: its
// closing quote q, or the end of its line, unless the next line goes on
// with more of a wrapped value.
func quotedEnd(t string, k int, q byte) int {
	e := k
	for {
		for e < len(t) && t[e] != q && t[e] != '\n' && t[e] != '\r' {
			e++
		}
		j := e
		if j < len(t) && t[j] == '\r' {
			j++
		}
		if j >= len(t) || t[j] != '\n' {
			return e
		}
		j++
		c := j
		for c < len(t) && t[c] != q && !isSpace(t[c]) {
			c++
		}
		if c == j || !looksRandom(t[j:c]) {
			return e
		}
		e = c
	}
}

// The kinds of value end that scanner.end remembers.
const (
	endValue = iota
	endField
	endLine
	endQuote // + 0 for '"', + 1 for '\''
	numEnds  = endQuote + 2
)

// end returns the end of the value of the given kind that starts at k,
// computed by read unless k lies inside the last value of that kind, whose
// end it shares: the values of nested separators are read once, and the
// scan stays linear.
func (sc *scanner) end(kind, k int, read func() int) int {
	if c := sc.ends[kind]; c.start <= k && k < c.end {
		return c.end
	}
	e := read()
	sc.ends[kind] = span{k, e}
	return e
}

// isAuthoritySep reports whether c ends the user name of a URL's
// authority.
func isAuthoritySep(c byte) bool {
	return c == ':' || c == '@' || c == '/' || c == '?' || c == '#'
}

// isQuoteOrAngle reports whether c is a quote, backtick or angle bracket:
// the marks that enclose a URL or a header value written inside text.
func isQuoteOrAngle(c byte) bool {
	return c == '"' || c == '\'' || c == '`' || c == '<' || c == '>'
}

// flag redacts the value of a command-line option that names a secret and
// takes its value after a blank ("--password hunter2", "--api-key K"; the
// "--password=hunter2" form is a parameter), and the password of a user
// option ("-u user:password", "--user user:password").
func (sc *scanner) flag(i int) {
	t := sc.t
	n := i + 1
	if t[n] == '-' {
		n++
	}
	e := n
	for e < len(t) && e-n < maxName && isNameChar(t[e]) {
		e++
	}
	name := t[n:e]
	if e >= len(t) || t[e] != ' ' || name == "" {
		return
	}
	k := e + 1
	if k >= len(t) || t[k] == '-' || isSpace(t[k]) {
		return
	}
	v := k
	for v < len(t) && !isSpace(t[v]) && !isQuoteOrAngle(t[v]) {
		v++
	}
	val := t[k:v]
	if name == "u" || name == "user" {
		// user:password; a user name alone is not a secret.
		if c := strings.IndexByte(val, ':'); c > 0 && c+1 < len(val) {
			sc.add(k+c+1, v)
		}
		return
	}
	if len(name) < 2 {
		return
	}
	switch classifyName(name) {
	case strongSecret:
		sc.add(k, v)
	case weakSecret:
		if looksRandom(val[:min(len(val), 64)]) {
			sc.add(k, v)
		}
	}
}
