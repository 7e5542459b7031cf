package erradvisor

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/erradvisor/erradvisor/internal/hint"
	"github.com/erradvisor/erradvisor/internal/match"
)

// Class answers the one question a request loop has after a failure: what
// should the next request be? Every failure gets exactly one Class.
//
// The zero value is Unknown.
type Class uint8

// The classes, from "nothing matched" to "the caller aborted".
const (
	// Unknown means no rule and no status matched. Conservative hosts stop;
	// persistent hosts retry.
	Unknown Class = iota
	// Transient means the same request will likely succeed later: rate
	// limits, overload, 5xx, network faults, timeouts, cut streams.
	Transient
	// Overflow means the prompt exceeds the model's context window: compact
	// the conversation, then make one fresh attempt.
	Overflow
	// Quota means a plan, usage, session or budget limit was reached, or the
	// account is suspended. Retrying does not help before the reset.
	Quota
	// Billing means a pay-as-you-go balance is exhausted; it clears when the
	// account is topped up.
	Billing
	// Permanent means the request or configuration is wrong (credentials,
	// permissions, unknown model, invalid request, content policy).
	Permanent
	// Canceled means the caller aborted the request. It calls for silence.
	Canceled

	numClasses
)

var classNames = [numClasses]string{
	Unknown:   "unknown",
	Transient: "transient",
	Overflow:  "overflow",
	Quota:     "quota",
	Billing:   "billing",
	Permanent: "permanent",
	Canceled:  "canceled",
}

// String returns the lower-case name of the class ("transient", "overflow", ...).
// An out-of-range value prints as "class(N)".
func (c Class) String() string {
	if c < numClasses {
		return classNames[c]
	}
	return fmt.Sprintf("class(%d)", uint8(c))
}

// Valid reports whether c is one of the declared classes.
func (c Class) Valid() bool { return c < numClasses }

// parseClass returns the Class whose String is s.
func parseClass(s string) (Class, error) {
	for i, n := range classNames {
		if n == s {
			return Class(i), nil
		}
	}
	return Unknown, fmt.Errorf("erradvisor: unknown class %q", s)
}

// MarshalText implements encoding.TextMarshaler.
func (c Class) MarshalText() ([]byte, error) {
	if !c.Valid() {
		return nil, fmt.Errorf("erradvisor: invalid class %d", uint8(c))
	}
	return []byte(classNames[c]), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (c *Class) UnmarshalText(b []byte) error {
	v, err := parseClass(string(b))
	if err != nil {
		return err
	}
	*c = v
	return nil
}

// Reason refines a Class. Each reason belongs to exactly one class; see
// Reason.Class. The empty Reason goes with Unknown.
type Reason string

// The reasons, grouped by the class they refine.
const (
	// Transient reasons.
	ReasonRateLimit  Reason = "rate_limit" // request or token rate exceeded for a short window
	ReasonOverloaded Reason = "overloaded" // the provider has no capacity right now
	ReasonServer     Reason = "server"     // 5xx or an internal server error
	ReasonNetwork    Reason = "network"    // connection reset, refused, DNS, TLS, GOAWAY
	ReasonTimeout    Reason = "timeout"    // deadline or idle timeout
	ReasonStream     Reason = "stream"     // a response stream ended early or broke

	// Overflow reason.
	ReasonContextWindow Reason = "context_window" // the prompt does not fit the context window

	// Quota reasons.
	ReasonUsageLimit Reason = "usage_limit" // subscription or session window used up
	ReasonQuota      Reason = "quota"       // plan quota or daily allotment exhausted
	ReasonBudget     Reason = "budget"      // proxy or spending budget exceeded
	ReasonSuspended  Reason = "suspended"   // the account is suspended

	// Billing reason.
	ReasonCredits Reason = "credits" // prepaid balance or credits exhausted

	// Permanent reasons.
	ReasonAuth           Reason = "auth"            // missing, invalid or revoked credentials
	ReasonPermission     Reason = "permission"      // credentials valid but not allowed
	ReasonModelNotFound  Reason = "model_not_found" // unknown, retired or unsupported model
	ReasonInvalidRequest Reason = "invalid_request" // the request itself is malformed
	ReasonContentPolicy  Reason = "content_policy"  // refused by a safety or content filter

	// Canceled reason.
	ReasonAborted Reason = "aborted" // the caller aborted
)

var reasonClass = map[Reason]Class{
	"":                   Unknown,
	ReasonRateLimit:      Transient,
	ReasonOverloaded:     Transient,
	ReasonServer:         Transient,
	ReasonNetwork:        Transient,
	ReasonTimeout:        Transient,
	ReasonStream:         Transient,
	ReasonContextWindow:  Overflow,
	ReasonUsageLimit:     Quota,
	ReasonQuota:          Quota,
	ReasonBudget:         Quota,
	ReasonSuspended:      Quota,
	ReasonCredits:        Billing,
	ReasonAuth:           Permanent,
	ReasonPermission:     Permanent,
	ReasonModelNotFound:  Permanent,
	ReasonInvalidRequest: Permanent,
	ReasonContentPolicy:  Permanent,
	ReasonAborted:        Canceled,
}

// Class returns the class a reason belongs to, and false for a reason that is
// not one of the declared values.
func (r Reason) Class() (Class, bool) {
	c, ok := reasonClass[r]
	return c, ok
}

// Failure is everything a host knows about one failed model request. Fill
// what you have; every field is optional.
type Failure struct {
	// Provider is the host's provider id ("anthropic", "openai", "bedrock",
	// ...). It enables the rules written for that provider; common aliases
	// are understood and case is ignored. An unknown or empty id simply
	// skips provider-specific rules.
	Provider string
	// Model is the model id the request used.
	Model string
	// Status is the HTTP status code, or 0 when there was none (a network
	// error, or an error event inside a 200 stream). The rules read a
	// status the text states ("HTTP 429") in place of a 0, and a client
	// error the text states inside a 5xx (a gateway's 500 around the
	// provider's 400; not 408, 409, 421, 424, 425, 429 or 499) in place of
	// the 5xx. Under such a client error, a host's transport words around
	// the answer ("connection error", "stream error") are not read.
	Status int
	// Code is the provider's error type or code when the host's SDK exposes
	// it separately ("overloaded_error", "insufficient_quota").
	Code string
	// Message is the error text or raw response body as the host has it. It
	// may be wrapped by SDKs and gateways ("Error: 503 litellm...: <body>").
	Message string
	// Header holds the response headers, when available.
	Header http.Header
	// Err is the Go error chain, when there is one.
	Err error
	// At is when the failure was observed: set it to the host clock's now
	// (the SDK adapters take it from the response's Date header when there
	// is one). It anchors HTTP-date Retry-After values and reset times
	// written as durations ("reset after 8h44m7s"), clock times ("resets
	// 4pm (Asia/Kuala_Lumpur)", "try again at 09:20:40 AM") or dates without
	// a zone ("will reset at 2026-06-10 09:05:49"). When it is zero, only
	// fully specified moments (RFC 3339, Unix time) give a reset time.
	At time.Time
}

// Classification is the verdict on one Failure.
type Classification struct {
	// Class is what the next request should be.
	Class Class
	// Reason refines Class.
	Reason Reason
	// Rule is the id of the rule that decided ("anthropic.overloaded",
	// "status.429", "go.context_canceled"). It is empty only for Unknown,
	// and set for Unknown only when a rule of the outside tier read the
	// text as no failure of a model request at all ("outside.tool": a
	// tool's or an MCP server's error).
	Rule string
	// RetryAfter is the wait the server stated in headers or body, or 0.
	RetryAfter time.Duration
	// ResetAt is when a Quota or Billing limit resets, when the text states
	// a reset time or a duration (anchored at Failure.At); zero otherwise.
	ResetAt time.Time
	// Evidence says what kind of evidence decided: the Go error chain, the
	// x-should-retry header, a structured code, the text, or the status
	// alone. A host may trust a verdict from weak evidence less (a bare 500
	// says little; an error type such as "insufficient_quota" says much).
	Evidence Evidence
	// RetriesExhausted reports that a client-side retry layer already
	// retried and gave up ("exceeded maximum number of attempts", "Max
	// retries exceeded", "retries exhausted"): retrying on top multiplies
	// the attempts. Class and Reason still say what the inner cause was
	// (Transient when the text names none). It is set by a rule with
	// `exhausted: true`, or by an SDK error type on the Go error chain
	// (aws-sdk-go-v2's retry.MaxAttemptsError). Never set for Canceled.
	RetriesExhausted bool `json:",omitempty"`
}

// outside reports whether c is the verdict of a rule of the outside tier:
// the text reports no failure of a model request (Unknown, with a rule).
func (c Classification) outside() bool { return c.Class == Unknown && c.Rule != "" }

// Evidence is the kind of evidence a Classification rests on, from none to
// the strongest. The zero value is EvidenceNone.
type Evidence uint8

// The kinds of evidence, weakest first.
const (
	// EvidenceNone means nothing decided: the class is Unknown.
	EvidenceNone Evidence = iota
	// EvidenceWords means no rule and no status decided, and the word
	// model gave the class: a linear model over the text's words, trained
	// on the repository's labelled texts, which speaks only when it is
	// confident and never gives Overflow or Canceled. It is the weakest
	// evidence there is; a host that wants rule verdicts only can read it
	// as Unknown.
	EvidenceWords
	// EvidenceStatus means the HTTP status alone decided (a status-only
	// rule, including a status read from the text such as "HTTP 503").
	EvidenceStatus
	// EvidenceText means a text rule decided: a phrase, a concept
	// combination or a regular expression found in the message.
	EvidenceText
	// EvidenceCode means a structured error code or type decided:
	// Failure.Code equal to one of a rule's codes.
	EvidenceCode
	// EvidenceHeader means the x-should-retry response header decided.
	EvidenceHeader
	// EvidenceChain means the Go error chain decided (context.Canceled,
	// a deadline, a syscall error, a DNS error, ...).
	EvidenceChain

	numEvidence
)

var evidenceNames = [numEvidence]string{
	EvidenceNone:   "none",
	EvidenceWords:  "words",
	EvidenceStatus: "status",
	EvidenceText:   "text",
	EvidenceCode:   "code",
	EvidenceHeader: "header",
	EvidenceChain:  "chain",
}

// String returns the lower-case name of the evidence kind ("status",
// "text", ...). An out-of-range value prints as "evidence(N)".
func (e Evidence) String() string {
	if e < numEvidence {
		return evidenceNames[e]
	}
	return fmt.Sprintf("evidence(%d)", uint8(e))
}

// LogValue implements slog.LogValuer: a group of the non-empty fields.
func (c Classification) LogValue() slog.Value {
	attrs := make([]slog.Attr, 0, 6)
	attrs = append(attrs, slog.String("class", c.Class.String()))
	if c.Reason != "" {
		attrs = append(attrs, slog.String("reason", string(c.Reason)))
	}
	if c.Rule != "" {
		attrs = append(attrs, slog.String("rule", c.Rule))
	}
	if c.RetryAfter > 0 {
		attrs = append(attrs, slog.Duration("retry_after", c.RetryAfter))
	}
	if !c.ResetAt.IsZero() {
		attrs = append(attrs, slog.Time("reset_at", c.ResetAt))
	}
	if c.Evidence != EvidenceNone {
		attrs = append(attrs, slog.String("evidence", c.Evidence.String()))
	}
	if c.RetriesExhausted {
		attrs = append(attrs, slog.Bool("retries_exhausted", true))
	}
	return slog.GroupValue(attrs...)
}

// Classifier classifies failures with a compiled rule set. Build one with
// NewClassifier; the package-level Classify uses the embedded defaults. A
// Classifier is immutable once built and safe for concurrent use. The zero
// Classifier and a nil *Classifier classify with the embedded defaults, as
// the package-level Classify does.
type Classifier struct {
	rules     []*rule // in evidence order: by tier, then by layer
	exhausted []*rule // the rules marked `exhausted`, in order
	m         *match.Matcher
	anchors   [numAnchors]int32 // phrase ids of the anchor phrases
}

// NewClassifier compiles rule sets into a Classifier. Layers come highest
// priority first. Layers merge within a tier (see the rule format): every
// rule of a tier is tried before any rule of a later tier, whatever layer it
// comes from, and within a tier the rules of a higher layer come first. So a
// project rule that reads only the status never beats a default rule that
// reads the text. A rule id in a higher layer hides the rule of the same id
// below it (a disabled rule only hides). Concept vocabularies of all layers
// are joined. To layer a project file over a user file over the defaults:
//
//	defaults, _ := erradvisor.DefaultRules()
//	c, err := erradvisor.NewClassifier(project, user, defaults)
//
// Nil sets are skipped.
func NewClassifier(layers ...*RuleSet) (*Classifier, error) {
	return newClassifier(layers...)
}

// LoadClassifier builds a Classifier from rule files layered over the
// embedded defaults, highest priority first. Paths that do not exist are
// skipped, so a host can pass its project and user locations unconditionally.
func LoadClassifier(paths ...string) (*Classifier, error) {
	layers := make([]*RuleSet, 0, len(paths)+1)
	for _, p := range paths {
		s, err := LoadRuleFile(p)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, err
		}
		layers = append(layers, s)
	}
	d, err := DefaultRules()
	if err != nil {
		return nil, err
	}
	return newClassifier(append(layers, d)...)
}

// spellings returns the ways a phrase is written in texts: itself and, when
// it has simplified Chinese characters, their traditional forms.
func spellings(p string) []string {
	if t := match.Traditional(p); t != p {
		return []string{p, t}
	}
	return []string{p}
}

func newClassifier(layers ...*RuleSet) (*Classifier, error) {
	c := &Classifier{}
	seen := map[string]bool{}
	for _, l := range layers {
		if l == nil {
			continue
		}
		for _, r := range l.rules {
			if seen[r.id] {
				continue
			}
			seen[r.id] = true
			if !r.disabled {
				c.rules = append(c.rules, r)
			}
		}
	}
	orderByTier(c.rules)
	concepts, err := mergeConcepts(layers)
	if err != nil {
		return nil, err
	}
	// One phrase list for all rules and anchors.
	ids := map[string]int32{}
	var phrases []string
	id := func(p string) int32 {
		if i, ok := ids[p]; ok {
			return i
		}
		i := int32(len(phrases))
		ids[p] = i
		phrases = append(phrases, p)
		return i
	}
	for i := range c.anchors {
		c.anchors[i] = id(match.Normalize(hint.AnchorPhrase(i)))
	}
	// Concept words are phrases too; each phrase knows its concepts.
	var conceptOf []match.Mask
	for ci, cn := range concepts {
		for _, w := range cn.words {
			for _, v := range spellings(w) {
				pid := id(v)
				for int(pid) >= len(conceptOf) {
					conceptOf = append(conceptOf, match.Mask{})
				}
				conceptOf[pid].Add(ci)
			}
		}
	}
	for _, w := range match.IDMarkers() {
		pid := id(match.Normalize(w))
		for int(pid) >= len(conceptOf) {
			conceptOf = append(conceptOf, match.Mask{})
		}
		conceptOf[pid].Add(match.IDMarker)
	}
	var combos []match.Mask
	combo := func(names []string) (int32, error) {
		var mask match.Mask
		for _, n := range names {
			ci := slices.IndexFunc(concepts, func(cn concept) bool { return cn.name == n })
			if ci < 0 {
				return 0, fmt.Errorf("unknown concept %q", n)
			}
			mask.Add(ci)
		}
		if k := slices.Index(combos, mask); k >= 0 {
			return int32(k), nil
		}
		combos = append(combos, mask)
		return int32(len(combos) - 1), nil
	}
	// idsOf returns the phrase ids of ps, each in every spelling.
	idsOf := func(ps []string) []int32 {
		var out []int32
		for _, p := range ps {
			for _, v := range spellings(p) {
				out = append(out, id(v))
			}
		}
		return out
	}
	compiled := make([]*rule, len(c.rules))
	for i, r := range c.rules {
		cr := *r // rules of a RuleSet stay untouched; ids belong to this Classifier
		cr.matchID, cr.alsoID, cr.unlessID = idsOf(r.match), idsOf(r.also), idsOf(r.unless)
		cr.allID = nil
		for _, p := range r.all { // each must occur: one spelling only
			cr.allID = append(cr.allID, id(p))
		}
		cr.comboID = nil
		for _, names := range r.clauses {
			k, err := combo(names)
			if err != nil {
				return nil, fmt.Errorf("rule %q: %v", r.id, err)
			}
			cr.comboID = append(cr.comboID, k)
		}
		compiled[i] = withWaitIDs(&cr)
	}
	c.rules = compiled
	for _, r := range compiled {
		if r.exhausted {
			c.exhausted = append(c.exhausted, r)
		}
	}
	m, err := match.New(phrases, conceptOf, combos)
	if err != nil {
		var tl *match.TooLargeError
		if errors.As(err, &tl) {
			// Name the rule whose phrase did not fit.
			for _, r := range compiled {
				if slices.Contains(r.matchID, tl.Phrase) || slices.Contains(r.allID, tl.Phrase) ||
					slices.Contains(r.alsoID, tl.Phrase) || slices.Contains(r.unlessID, tl.Phrase) {
					return nil, &RuleError{File: r.file, Line: r.line, Rule: r.id, Err: err}
				}
			}
		}
		return nil, err
	}
	c.m = m
	return c, nil
}

var defaultClassifier = sync.OnceValues(func() (*Classifier, error) {
	d, err := DefaultRules()
	if err != nil {
		return nil, err
	}
	return newClassifier(d)
})

// hitsOnStack is how many words of phrase hits Classify keeps on the stack:
// room for hitsOnStack*64 phrases, which the default rules stay well under
// (TestDefaultPhrasesFitOnStack), so that classifying allocates nothing. A
// classifier with more phrases allocates its hits.
const hitsOnStack = 48

// Classify classifies f with the embedded default rules. It never panics and
// does not allocate for messages up to a few kilobytes.
//
// Evidence is weighed in order of strength: the Go error chain (f.Err), then
// the x-should-retry header, then the rules (provider-specific first, then
// generic, then the HTTP status alone), and last, when nothing else decides,
// the word model (see EvidenceWords). Body text beats the status: a 429
// whose body says "insufficient_quota" is Quota, a 400 whose body speaks of
// the context length is Overflow.
func Classify(f Failure) Classification {
	c, err := defaultClassifier()
	if err != nil {
		return Classification{}
	}
	return c.Classify(f)
}

// ClassifyError classifies a Go error alone: it walks the error chain for
// cancellation, timeouts, network faults and certificate failures, then
// reads the error's text. It never panics, whatever the error: typed nils on
// the chain are skipped, a chain that unwraps to itself or fans out without
// end is read up to a fixed number of errors, and an error type whose
// methods panic is read as if it had no text and wrapped nothing. A nil
// error, or a typed nil alone, is Unknown.
func ClassifyError(err error) Classification {
	if err == nil {
		return Classification{}
	}
	return Classify(Failure{Err: err})
}

// Classify classifies f with c's rules. See the package-level Classify. A
// nil or zero c classifies with the embedded defaults.
func (c *Classifier) Classify(f Failure) Classification {
	if c == nil || c.m == nil {
		d, err := defaultClassifier()
		if err != nil || d == nil || d.m == nil {
			return Classification{}
		}
		c = d
	}
	// The error's text, read only when needed and only from a chain that
	// is safe to print.
	var facts chainFacts
	textOK := false
	if f.Err != nil {
		var cl Classification
		var ok bool
		if cl, ok, facts = classifyErrChain(f.Err); ok {
			cl.Evidence = EvidenceChain
			if cl.Class != Canceled {
				cl.RetryAfter = RetryAfter(f.Header, f.At)
				if !cl.RetriesExhausted {
					cl.RetriesExhausted = c.exhaustedText(f, facts.textual && !facts.suspect)
				}
			}
			return cl
		}
		textOK = !facts.suspect
	}
	msg := f.Message
	if msg == "" && textOK {
		msg = safeErrorText(f.Err)
	}
	var stack [hitsOnStack]uint64
	set := stack[:]
	if need := (c.m.NumPhrases() + 63) / 64; need > len(stack) {
		set = make([]uint64, need)
	} else {
		set = set[:need]
	}
	h := match.Hits{Set: set}
	var ends [numAnchors]int
	for i := range ends {
		ends[i] = -1
	}
	c.m.Scan(msg, &h, c.anchors[:], ends[:])
	if f.Code != "" {
		c.m.Scan(f.Code, &h, nil, nil)
	}
	status := f.Status
	if status == 0 {
		status = statusFromText(msg, &ends)
	}
	if status >= 500 {
		// A gateway's 5xx around the provider's own refusal: the inner
		// client error decides ("500 ... stopped streaming with error code
		// 413", `"statusCode":400`, "500: Gateway API error: 404 Not
		// Found"), not the wrapper's status, whether the host gave the
		// wrapper's status or the text leads with it.
		if inner := refusalFromText(msg, &ends); inner != 0 {
			status = inner
		}
	}
	prov := c.provider(f.Provider)
	xsr := header(f.Header, "X-Should-Retry", "x-should-retry")

	// The rules are in evidence order (by tier, then by layer). First the
	// rules that read text, on the body and then on the Go error's own
	// text; then the rules that read only the status.
	noTransient := xsr == "false"
	var errText string
	var errHits match.Hits
	var errStack [hitsOnStack]uint64
	// scanErrText reads the Go error's text once, when a rule needs it.
	scanErrText := func() {
		if errHits.Set != nil {
			return
		}
		if textOK {
			errText = safeErrorText(f.Err)
		}
		if len(set) > len(errStack) {
			errHits.Set = make([]uint64, len(set))
		} else {
			errHits.Set = errStack[:len(set)]
		}
		// The failure's text is the body and the error's text together:
		// an 'unless' phrase in the body still counts.
		copy(errHits.Set, set)
		c.m.Scan(errText, &errHits, nil, nil)
	}
	r, ev := firstRule(c.rules, prov, status, f.Code, msg, &h, noTransient, false)
	if r == nil && f.Err != nil && f.Message != "" {
		scanErrText()
		r, ev = firstRule(c.rules, prov, status, f.Code, errText, &errHits, noTransient, false)
	}
	if r == nil {
		r, ev = firstRule(c.rules, prov, status, f.Code, msg, &h, noTransient, true)
	}
	// A retry layer's "gave up" wording marks the verdict, and decides it
	// only when nothing else does.
	ex := c.exhaustedRule(prov, status, f.Code, msg, &h)
	if ex == nil && f.Err != nil && f.Message != "" && len(c.exhausted) > 0 {
		scanErrText()
		ex = c.exhaustedRule(prov, status, f.Code, errText, &errHits)
	}
	if r == nil && ex != nil && !(noTransient && ex.class == Transient) {
		r, ev = ex, EvidenceText
	}
	if xsr == "true" && (r == nil || r.class != Transient) {
		r, ev = headerRule(status), EvidenceHeader
	}
	var cl Classification
	if r != nil {
		cl = Classification{Class: r.class, Reason: r.reason, Rule: r.id, Evidence: ev,
			RetriesExhausted: ex != nil && r.class != Canceled && r.class != Unknown}
	} else if msg != "" {
		cl = guessFromWords(status, msg, noTransient)
	}

	// Stated waits: the longer of the headers' and the body's is the floor.
	// "retry after 2026-01-01T01:00:00Z" counts as a wait from f.At.
	wait, reset, retryAt := bodyHints(msg, &ends, f.At)
	if wait == 0 && !retryAt.IsZero() && !f.At.IsZero() {
		if d := retryAt.Sub(f.At); d > 0 && d <= maxHint {
			wait = d
		}
	}
	cl.RetryAfter = max(RetryAfter(f.Header, f.At), wait)
	cl = adjustForWait(cl, r, resetsLater(reset, f.At))
	if cl.Class == Quota || cl.Class == Billing {
		switch {
		case !reset.IsZero():
			cl.ResetAt = reset
		case cl.RetryAfter > 0 && !f.At.IsZero():
			cl.ResetAt = f.At.Add(cl.RetryAfter)
		}
	}
	return cl
}

// exhaustedRule returns the first rule marked `exhausted` that applies, or
// nil.
func (c *Classifier) exhaustedRule(prov string, status int, code, msg string, h *match.Hits) *rule {
	for _, r := range c.exhausted {
		if r.applies(prov, status, code, msg, h) != EvidenceNone {
			return r
		}
	}
	return nil
}

// exhaustedText reports whether an `exhausted` rule applies to the failure's
// text: f.Message, or the error's text when there is no message and the
// chain holds an error that may carry text of its own (reading the text of
// the standard library's network errors would allocate for nothing) and is
// safe to print.
func (c *Classifier) exhaustedText(f Failure, textual bool) bool {
	if len(c.exhausted) == 0 {
		return false
	}
	msg := f.Message
	if msg == "" && textual {
		msg = safeErrorText(f.Err)
	}
	if msg == "" && f.Code == "" {
		return false
	}
	var stack [hitsOnStack]uint64
	set := stack[:]
	if need := (c.m.NumPhrases() + 63) / 64; need > len(stack) {
		set = make([]uint64, need)
	} else {
		set = set[:need]
	}
	h := match.Hits{Set: set}
	c.m.Scan(msg, &h, nil, nil)
	if f.Code != "" {
		c.m.Scan(f.Code, &h, nil, nil)
	}
	return c.exhaustedRule(c.provider(f.Provider), f.Status, f.Code, msg, &h) != nil
}

// firstRule returns the first of rules that applies and the evidence it
// rests on, or nil: among the rules that read text, or with statusOnly among
// those that read only the status and the provider. Rules marked
// `exhausted` never decide here.
func firstRule(rules []*rule, prov string, status int, code, msg string, h *match.Hits, noTransient, statusOnly bool) (*rule, Evidence) {
	// The server answered and refused the request: a host's or a wrapper's
	// transport words ("connection failed", "stream error") around that
	// answer do not make it worth retrying. A fault the answer names itself
	// ("ServiceUnavailableError" inside a 400 event) still reads, and so
	// does a fault rule written for a status, such as a gateway's bodyless
	// 400.
	//
	// Under an authentication refusal (401, 407) no fault word reads at
	// all: a host's "the endpoint may be temporarily unavailable, try
	// again" around a 401 is advice, and the same credentials fail again.
	//
	// Nor does an abort: a host that writes "aborting request" or
	// "Operation aborted" beside a refusal reports its own reaction to the
	// answer, not a person's cancel.
	refused := refusal(status)
	authRefused := status == 401 || status == 407
	for _, r := range rules {
		if r.exhausted || noTransient && r.class == Transient || r.late() != statusOnly {
			continue
		}
		if refused && r.tier == tierFault && len(r.status) == 0 &&
			(authRefused || r.reason == ReasonNetwork || r.reason == ReasonStream) {
			continue
		}
		if refused && r.class == Canceled && len(r.status) == 0 {
			continue
		}
		if ev := r.applies(prov, status, code, msg, h); ev != EvidenceNone {
			return r, ev
		}
	}
	return nil, EvidenceNone
}

// refusal reports whether status is a client error that the same request
// meets again: a 4xx other than a timeout (408), a conflict (409), a
// misdirected request (421), a failed dependency (424, Bedrock's model
// errors), too early (425), too many requests (429) and a client that closed
// the request (499).
func refusal(status int) bool {
	switch status {
	case 408, 409, 421, 424, 425, 429, 499:
		return false
	}
	return status >= 400 && status < 500
}

// headerRules are the verdicts of "x-should-retry: true" by the transient
// reason the status implies.
var headerRules = func() map[Reason]*rule {
	m := map[Reason]*rule{}
	for _, r := range []Reason{ReasonRateLimit, ReasonOverloaded, ReasonTimeout, ReasonServer} {
		m[r] = withWaitIDs(&rule{id: "header.x-should-retry", class: Transient, reason: r})
	}
	return m
}()

func headerRule(status int) *rule { return headerRules[transientReason(status)] }

// withWaitIDs sets the ids a rule reports when a stated wait moves its
// verdict (see adjustForWait), so that Classify builds no strings.
func withWaitIDs(r *rule) *rule {
	r.shortWaitID, r.longWaitID = r.id+".short_wait", r.id+".long_wait"
	return r
}

// late reports whether r is tried only after every other rule has read the
// body and the Go error's text: a rule of the status tier, whose evidence is
// the status (with at most a word of text, such as "Bad Request").
func (r *rule) late() bool { return r.tier == tierStatus }

// statusOnly reports whether r reads no text: it has guards and nothing else.
func (r *rule) statusOnly() bool {
	return len(r.codes) == 0 && len(r.match) == 0 && len(r.all) == 0 && len(r.also) == 0 &&
		len(r.unless) == 0 && r.re == nil && len(r.clauses) == 0 && !r.over && !r.budget
}

// applies reports whether r's guards, triggers and constraints hold, as the
// evidence the verdict rests on, or EvidenceNone when they do not.
func (r *rule) applies(prov string, status int, code, msg string, h *match.Hits) Evidence {
	if len(r.providers) > 0 && !slices.Contains(r.providers, prov) {
		return EvidenceNone
	}
	if len(r.status) > 0 && !slices.Contains(r.status, status) {
		return EvidenceNone
	}
	for _, id := range r.allID {
		if !h.Has(id) {
			return EvidenceNone
		}
	}
	for _, id := range r.unlessID {
		if h.Has(id) {
			return EvidenceNone
		}
	}
	if len(r.alsoID) > 0 && !slices.ContainsFunc(r.alsoID, h.Has) {
		return EvidenceNone
	}
	ev := r.trigger(code, msg, h)
	if ev != EvidenceNone && r.over && !hint.StatesExcess(msg) {
		return EvidenceNone
	}
	if ev != EvidenceNone && r.budget && !hint.BudgetFillsWindow(msg) {
		return EvidenceNone
	}
	return ev
}

// trigger reports whether one of r's triggers fires (or, for a rule
// without triggers, that its guards and constraints suffice), as the
// evidence it rests on.
func (r *rule) trigger(code, msg string, h *match.Hits) Evidence {
	if len(r.codes) == 0 && len(r.matchID) == 0 && r.re == nil && len(r.comboID) == 0 {
		if r.statusOnly() {
			return EvidenceStatus
		}
		return EvidenceText
	}
	if code != "" {
		for _, cd := range r.codes {
			if strings.EqualFold(cd, code) {
				return EvidenceCode
			}
		}
	}
	for _, id := range r.matchID {
		if h.Has(id) {
			return EvidenceText
		}
	}
	for _, k := range r.comboID {
		if h.HasCombo(k) {
			return EvidenceText
		}
	}
	if r.re != nil && r.re.MatchString(msg) {
		return EvidenceText
	}
	return EvidenceNone
}

// ruleMatchesExample reports whether the compiled rule r (one of c.rules)
// alone applies to an example text, with r's first provider and status as
// the context. buf is scratch space for the phrase set.
func (c *Classifier) ruleMatchesExample(r *rule, text string, buf []uint64) bool {
	prov, status, code := "", 0, ""
	if len(r.providers) > 0 {
		prov = r.providers[0]
	}
	if len(r.status) > 0 {
		status = r.status[0]
	}
	msg := text
	if len(r.match) == 0 && len(r.all) == 0 && r.re == nil && len(r.clauses) == 0 && len(r.codes) > 0 {
		code, msg = text, ""
	}
	clear(buf)
	h := match.Hits{Set: buf}
	c.m.Scan(msg, &h, nil, nil)
	c.m.Scan(code, &h, nil, nil)
	return r.applies(prov, status, code, msg, &h) != EvidenceNone
}

// provider returns the canonical id of p, without allocating.
func (c *Classifier) provider(p string) string {
	if p == "" {
		return ""
	}
	var buf [64]byte
	f := foldProvider(p, buf[:])
	if canon, ok := providerAliases[string(f)]; ok {
		return canon
	}
	for _, r := range c.rules { // ids only user rules name
		for _, rp := range r.providers {
			if rp == string(f) {
				return rp
			}
		}
	}
	return ""
}

// transientReason names the transient reason a bare status implies.
func transientReason(status int) Reason {
	switch status {
	case 429:
		return ReasonRateLimit
	case 503, 529:
		return ReasonOverloaded
	case 408, 504:
		return ReasonTimeout
	}
	return ReasonServer
}

// Stated waits move a verdict across the transient/quota line. A quota that
// says it resets within a minute is a per-minute limit in all but name; a
// rate limit that asks for an hour or more will not clear within any retry
// budget and is a quota in all but name.
const (
	shortQuotaWait = time.Minute
	longRateWait   = time.Hour
)

// resetsLater reports whether a stated reset time lies more than
// shortQuotaWait after at (or at is unknown).
func resetsLater(reset, at time.Time) bool {
	return !reset.IsZero() && (at.IsZero() || reset.Sub(at) > shortQuotaWait)
}

// adjustForWait applies those two moves to the verdict of rule r; the rule id
// gains a ".short_wait" or ".long_wait" suffix so the move is explained. A
// quota whose text states a later reset stays a quota, whatever short wait a
// header asks for, and so does one from a firm rule (a per-day allotment, a
// zero limit): a rolling window that frees one request in seconds does not
// make the allotment a rate limit.
func adjustForWait(cl Classification, r *rule, laterReset bool) Classification {
	switch {
	case r == nil:
	case cl.Class == Quota && cl.Reason != ReasonSuspended && !r.firm && !laterReset && cl.RetryAfter > 0 && cl.RetryAfter <= shortQuotaWait:
		cl.Class, cl.Reason, cl.Rule = Transient, ReasonRateLimit, r.shortWaitID
	case cl.Class == Transient && cl.Reason == ReasonRateLimit && cl.RetryAfter >= longRateWait:
		cl.Class, cl.Reason, cl.Rule = Quota, ReasonQuota, r.longWaitID
	}
	return cl
}
