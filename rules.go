package erradvisor

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode"

	"go.yaml.in/yaml/v3"

	"github.com/erradvisor/erradvisor/internal/match"
)

// The rule format (rules, concepts, tiers, flags and the limits a rule
// file must keep) is documented in the package documentation, doc.go, so
// that go doc shows it.

//go:embed rules.yaml
var defaultRulesYAML []byte

// RuleSet is a parsed and validated list of rules from one source. Build one
// with ParseRules, LoadRuleFile or DefaultRules, and combine sets with
// NewClassifier. A RuleSet is immutable and safe for concurrent use.
type RuleSet struct {
	name     string
	rules    []*rule
	concepts []concept
}

// RuleInfo describes one rule of a RuleSet.
type RuleInfo struct {
	ID          string
	Class       Class
	Reason      Reason
	Description string
	Providers   []string
	Status      []int
	Codes       []string
	Disabled    bool
	// Tier is the rule's place in the evidence order ("abort", "provider",
	// "hard_limit", "rate", "overflow", "permanent", "fault", "status"),
	// as written or as defaulted.
	Tier string
	// Exhausted is the rule's `exhausted` flag: it recognises a retry layer
	// that gave up, and sets Classification.RetriesExhausted.
	Exhausted bool
	// Examples and Not are the texts the rule must and must not match.
	Examples, Not []string
	// File and Line say where the rule is defined.
	File string
	Line int
}

// Name returns the name the set was parsed under (a file path for files,
// "rules.yaml" for the defaults), or "" for a nil set.
func (s *RuleSet) Name() string {
	if s == nil {
		return ""
	}
	return s.name
}

// Rules describes the rules of the set, in order. A nil or zero set has none.
func (s *RuleSet) Rules() []RuleInfo {
	if s == nil {
		return nil
	}
	out := make([]RuleInfo, len(s.rules))
	for i, r := range s.rules {
		out[i] = RuleInfo{
			ID: r.id, Class: r.class, Reason: r.reason, Description: r.description,
			Providers: slices.Clone(r.providers), Status: slices.Clone(r.status),
			Codes: slices.Clone(r.codes), Disabled: r.disabled, Tier: r.tier.String(), Exhausted: r.exhausted,
			Examples: slices.Clone(r.examples), Not: slices.Clone(r.not),
			File: s.name, Line: r.line,
		}
	}
	return out
}

// RuleError reports a problem in a rule file: which file, which line and,
// when known, which rule.
type RuleError struct {
	File string
	Line int
	Rule string // rule id, or "" for a problem outside a rule
	Err  error
}

// Error implements error: "file:line: rule "id": problem". A zero RuleError
// reads "rules: invalid rule file" and a nil one "<nil>".
func (e *RuleError) Error() string {
	if e == nil {
		return "<nil>"
	}
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
	} else {
		b.WriteString("rules")
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Rule != "" {
		fmt.Fprintf(&b, ": rule %q", e.Rule)
	}
	b.WriteString(": ")
	if msg := safeErrorText(e.Err); msg != "" {
		b.WriteString(msg)
	} else {
		b.WriteString("invalid rule file")
	}
	return b.String()
}

// Unwrap returns the underlying error, or nil for a nil RuleError.
func (e *RuleError) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Err
}

// rule is one compiled rule.
type rule struct {
	id          string
	class       Class
	reason      Reason
	description string
	providers   []string // canonical provider ids
	status      []int
	codes       []string
	match       []string // normalised phrases
	all         []string
	also        []string
	unless      []string
	re          *regexp.Regexp
	disabled    bool
	firm        bool
	exhausted   bool
	examples    []string
	not         []string
	file        string
	line        int
	tier        tier
	clauses     [][]string // concept names that must meet in one clause, per entry
	over        bool       // numbers: over
	budget      bool       // numbers: budget

	// Set when compiled into a Classifier: phrase ids in its matcher,
	// concept combination ids, and the ids reported when a stated wait
	// moves the verdict.
	matchID, allID, alsoID, unlessID []int32
	comboID                          []int32
	shortWaitID, longWaitID          string
}

// ruleSpec is a rule as written in YAML.
type ruleSpec struct {
	ID          string   `yaml:"id"`
	Class       string   `yaml:"class"`
	Reason      string   `yaml:"reason"`
	Description string   `yaml:"description"`
	Providers   []string `yaml:"providers"`
	Status      []int    `yaml:"status"`
	Codes       []string `yaml:"codes"`
	Match       []string `yaml:"match"`
	All         []string `yaml:"all"`
	Also        []string `yaml:"also"`
	Unless      []string `yaml:"unless"`
	Regex       string   `yaml:"regex"`
	Disabled    bool     `yaml:"disabled"`
	Firm        bool     `yaml:"firm"`
	Exhausted   bool     `yaml:"exhausted"`
	Examples    []string `yaml:"examples"`
	Not         []string `yaml:"not"`
	Tier        string   `yaml:"tier"`
	Clause      []string `yaml:"clause"`
	Numbers     string   `yaml:"numbers"`
}

var ruleKeys = []string{"id", "class", "reason", "description", "providers", "status", "codes",
	"match", "all", "also", "unless", "regex", "disabled", "firm", "exhausted", "examples", "not", "tier", "clause", "numbers"}

// Bounds on what a rule file may cost.
const (
	// maxRuleFileSize bounds what ParseRules and LoadRuleFile read.
	maxRuleFileSize = 1 << 20
	// maxExpandedCost bounds the document as its aliases expand it: one
	// unit per node plus the length of each scalar.
	maxExpandedCost = 4 << 20
	// maxExampleBytes bounds the examples and 'not' texts of a file, which
	// are all matched when it is parsed.
	maxExampleBytes = 1 << 20
	// maxRegexLen bounds a rule's regular expression.
	maxRegexLen = 1024
)

// ParseRules parses and validates a YAML rule document. name is used in
// errors (a file path, typically). Every rule's examples must match it and
// its `not` texts must not. Errors are *RuleError values naming the file,
// the line and the rule. See the package documentation of the rule format
// for the bounds a document must keep.
func ParseRules(name string, data []byte) (*RuleSet, error) {
	fail := func(line int, id string, format string, args ...any) error {
		return &RuleError{File: name, Line: line, Rule: id, Err: fmt.Errorf(format, args...)}
	}
	if len(data) > maxRuleFileSize {
		return nil, fail(0, "", "file larger than %d bytes", maxRuleFileSize)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return &RuleSet{name: name}, nil // no document: no rules
		}
		return nil, &RuleError{File: name, Line: yamlErrorLine(err), Err: err}
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return nil, &RuleError{File: name, Line: yamlErrorLine(err), Err: err}
	default:
		return nil, fail(max(next.Line, 1), "", "a second YAML document: a rule file holds exactly one")
	}
	set := &RuleSet{name: name}
	if len(doc.Content) == 0 {
		return set, nil // an empty document has no rules
	}
	top := doc.Content[0]
	if top.Kind == yaml.ScalarNode && top.Tag == "!!null" {
		return set, nil
	}
	if top.Kind != yaml.MappingNode {
		return nil, fail(top.Line, "", "want a mapping with a 'rules' list")
	}
	var list *yaml.Node
	for i := 0; i+1 < len(top.Content); i += 2 {
		k := top.Content[i]
		if k.Value == "concepts" {
			cs, err := parseConcepts(top.Content[i+1])
			if err != nil {
				return nil, fail(k.Line, "", "%v", err)
			}
			set.concepts = cs
			continue
		}
		if k.Value != "rules" {
			return nil, fail(k.Line, "", "unknown key %q (want 'rules' or 'concepts')", k.Value)
		}
		if list != nil {
			return nil, fail(k.Line, "", "key 'rules' repeated")
		}
		list = top.Content[i+1]
	}
	// Bound the whole document before decoding any of it: aliases expand,
	// and keys must be unique in every mapping.
	b := budget{left: maxExpandedCost, memo: map[*yaml.Node]int{}}
	if _, err := b.cost(&doc); err != nil {
		return nil, fail(err.line, ruleAt(list, err.line), "%s", err.msg)
	}
	if list == nil || list.Tag == "!!null" {
		return set, nil
	}
	if list.Kind == yaml.AliasNode && list.Alias != nil {
		list = list.Alias
	}
	if list.Kind != yaml.SequenceNode {
		return nil, fail(list.Line, "", "'rules' must be a list")
	}
	seen := map[string]bool{}
	exampleBytes := 0
	for _, n := range list.Content {
		if n.Kind == yaml.AliasNode && n.Alias != nil {
			n = n.Alias
		}
		if n.Kind != yaml.MappingNode {
			return nil, fail(n.Line, "", "a rule must be a mapping")
		}
		id := ruleID(n)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if !slices.Contains(ruleKeys, k.Value) {
				return nil, fail(k.Line, id, "unknown field %q", k.Value)
			}
			if line, msg := fieldShape(k.Value, v); msg != "" {
				return nil, fail(line, id, "%s: %s", k.Value, msg)
			}
		}
		var spec ruleSpec
		if err := n.Decode(&spec); err != nil {
			return nil, &RuleError{File: name, Line: yamlErrorLine(err, n.Line), Rule: id, Err: err}
		}
		r, err := compileSpec(spec)
		if err != nil {
			return nil, fail(n.Line, spec.ID, "%v", err)
		}
		if seen[r.id] {
			return nil, fail(n.Line, r.id, "duplicate rule id")
		}
		seen[r.id] = true
		for _, ex := range slices.Concat(r.examples, r.not) {
			exampleBytes += len(ex)
		}
		if exampleBytes > maxExampleBytes {
			return nil, fail(n.Line, r.id, "examples and 'not' texts exceed %d bytes in all", maxExampleBytes)
		}
		r.file, r.line = name, n.Line
		set.rules = append(set.rules, r)
	}
	// Run every rule's examples against the rule alone.
	c, err := newClassifier(set)
	if err != nil {
		var re *RuleError
		if errors.As(err, &re) {
			return nil, err
		}
		return nil, &RuleError{File: name, Err: err}
	}
	buf := make([]uint64, (c.m.NumPhrases()+63)/64)
	for _, cr := range c.rules {
		for _, ex := range cr.examples {
			if !c.ruleMatchesExample(cr, ex, buf) {
				return nil, fail(cr.line, cr.id, "example does not match: %q", ex)
			}
		}
		for _, ex := range cr.not {
			if c.ruleMatchesExample(cr, ex, buf) {
				return nil, fail(cr.line, cr.id, "'not' text matches: %q", ex)
			}
		}
	}
	return set, nil
}

// listFields are the rule fields that hold lists; the others hold one
// scalar.
var listFields = []string{"providers", "status", "codes", "match", "all", "also", "unless", "examples", "not", "clause"}

// fieldShape checks the shape of a rule field's value before it is decoded
// (the YAML decoder takes time quadratic in the size of a mapping it is
// handed, even one it then rejects): a scalar, or a list of scalars, and
// for status a list of integers. It returns the line and the problem, or
// "".
func fieldShape(field string, v *yaml.Node) (int, string) {
	v = resolveAlias(v)
	if !slices.Contains(listFields, field) {
		if v.Kind != yaml.ScalarNode {
			return v.Line, "want a single value"
		}
		return 0, ""
	}
	if v.Kind == yaml.ScalarNode && v.ShortTag() == "!!null" {
		return 0, "" // an empty list
	}
	want := "want a list of texts"
	if field == "status" {
		want = "want a list of integers"
	}
	if v.Kind != yaml.SequenceNode {
		return v.Line, want
	}
	for _, it := range v.Content {
		it = resolveAlias(it)
		if it.Kind != yaml.ScalarNode || field == "status" && it.ShortTag() != "!!int" {
			return it.Line, want
		}
	}
	return 0, ""
}

// resolveAlias returns the node an alias stands for, or n itself.
func resolveAlias(n *yaml.Node) *yaml.Node {
	for i := 0; i < 8 && n.Kind == yaml.AliasNode && n.Alias != nil; i++ {
		n = n.Alias
	}
	return n
}

// budget bounds the cost of a YAML tree as its aliases expand it.
type budget struct {
	left int
	memo map[*yaml.Node]int // anchored node -> its expanded cost; -1 while in progress
}

// budgetError says where the document broke a bound.
type budgetError struct {
	line int
	msg  string
}

// cost returns the expanded cost of n, and checks that every mapping's keys
// are unique. An anchored node's cost is computed once, so the walk is
// linear in the document, however its aliases nest.
func (b *budget) cost(n *yaml.Node) (int, *budgetError) {
	if n == nil {
		return 0, nil
	}
	if n.Kind == yaml.AliasNode {
		if n.Alias == nil {
			return 0, nil
		}
		c, err := b.cost(n.Alias)
		if err != nil {
			return 0, err
		}
		// The first visit of the anchor paid for it; each alias pays again.
		if b.left -= c; b.left < 0 {
			return 0, &budgetError{n.Line, fmt.Sprintf("aliases expand the document beyond %d bytes", maxExpandedCost)}
		}
		return c, nil
	}
	if n.Anchor != "" {
		switch c, ok := b.memo[n]; {
		case ok && c < 0:
			return 0, &budgetError{n.Line, fmt.Sprintf("anchor %q contains an alias to itself", n.Anchor)}
		case ok:
			return c, nil
		}
		b.memo[n] = -1
	}
	c := 1 + len(n.Value)
	if b.left -= c; b.left < 0 {
		return 0, &budgetError{n.Line, fmt.Sprintf("aliases expand the document beyond %d bytes", maxExpandedCost)}
	}
	if n.Kind == yaml.MappingNode {
		if err := uniqueKeys(n); err != nil {
			return 0, err
		}
	}
	for _, ch := range n.Content {
		cc, err := b.cost(ch)
		if err != nil {
			return 0, err
		}
		c = min(c+cc, maxExpandedCost+1)
	}
	if n.Anchor != "" {
		b.memo[n] = c
	}
	return c, nil
}

// uniqueKeys checks that no scalar key of the mapping n repeats, in time
// linear in its size.
func uniqueKeys(n *yaml.Node) *budgetError {
	var first map[string]*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if k.Kind != yaml.ScalarNode {
			continue
		}
		if first == nil {
			first = make(map[string]*yaml.Node, len(n.Content)/2)
		}
		if p, ok := first[k.Value]; ok {
			return &budgetError{k.Line, fmt.Sprintf("key %q repeated (first at line %d)", k.Value, p.Line)}
		}
		first[k.Value] = k
	}
	return nil
}

// ruleAt returns the id of the rule of list that holds line, or "".
func ruleAt(list *yaml.Node, line int) string {
	if list == nil || list.Kind != yaml.SequenceNode {
		return ""
	}
	id := ""
	for _, n := range list.Content {
		if n.Line > line {
			break
		}
		if n.Kind == yaml.MappingNode {
			id = ruleID(n)
		}
	}
	return id
}

// ruleID returns the id of a rule node, if it has one.
func ruleID(n *yaml.Node) string {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "id" {
			return n.Content[i+1].Value
		}
	}
	return ""
}

// yamlErrorLine extracts "line N" from a YAML error, or returns def.
func yamlErrorLine(err error, def ...int) int {
	var te *yaml.TypeError
	msg := err.Error()
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	if i := strings.Index(msg, "line "); i >= 0 {
		n := 0
		for _, ch := range msg[i+5:] {
			if ch < '0' || ch > '9' {
				break
			}
			n = n*10 + int(ch-'0')
			if n > 1<<30 {
				break
			}
		}
		if n > 0 {
			return n
		}
	}
	if len(def) > 0 {
		return def[0]
	}
	return 0
}

// LoadRuleFile reads and parses a rule file. It reads only a regular file
// of at most 1 MiB: a device, a FIFO or a directory is an error at once,
// and so is a file that grows beyond the limit while it is read.
func LoadRuleFile(path string) (*RuleSet, error) {
	fail := func(err error) (*RuleSet, error) { return nil, &RuleError{File: path, Err: err} }
	// Stat first: opening a FIFO blocks until a writer appears.
	fi, err := os.Stat(path)
	if err != nil {
		return fail(err)
	}
	if !fi.Mode().IsRegular() {
		return fail(fmt.Errorf("not a regular file (%s)", fi.Mode().Type()))
	}
	if fi.Size() > maxRuleFileSize {
		return fail(fmt.Errorf("file larger than %d bytes", maxRuleFileSize))
	}
	f, err := os.Open(path)
	if err != nil {
		return fail(err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return fail(errors.New("not a regular file"))
	}
	data, err := io.ReadAll(io.LimitReader(f, maxRuleFileSize+1))
	if err != nil {
		return fail(err)
	}
	if len(data) > maxRuleFileSize {
		return fail(fmt.Errorf("file larger than %d bytes", maxRuleFileSize))
	}
	return ParseRules(path, data)
}

var defaults = sync.OnceValues(func() (*RuleSet, error) {
	return ParseRules("rules.yaml", defaultRulesYAML)
})

// DefaultRules returns the embedded default rule set. The error is never
// non-nil in a released build (the package's tests parse the same data); it
// exists so that nothing here can panic.
func DefaultRules() (*RuleSet, error) { return defaults() }

// validID reports whether s is a usable rule id.
func validID(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// compileSpec validates a rule as written and compiles what it can alone.
func compileSpec(s ruleSpec) (*rule, error) {
	if !validID(s.ID) {
		return nil, fmt.Errorf("id %q: want 1 to 128 letters, digits, '.', '_' or '-'", s.ID)
	}
	r := &rule{id: s.ID, description: s.Description, disabled: s.Disabled, firm: s.Firm,
		exhausted: s.Exhausted, examples: s.Examples, not: s.Not}
	if s.Disabled {
		return r, nil // a disabled rule only hides a lower one
	}
	cl, err := parseClass(s.Class)
	if err != nil || cl == Unknown && s.Class != "unknown" {
		return nil, fmt.Errorf("class %q: want transient, overflow, quota, billing, permanent, canceled or unknown", s.Class)
	}
	rc, ok := Reason(s.Reason).Class()
	if !ok || rc != cl {
		return nil, fmt.Errorf("reason %q does not belong to class %s", s.Reason, cl)
	}
	r.class, r.reason = cl, Reason(s.Reason)
	for _, p := range s.Providers {
		c := canonicalProviderName(p)
		if c == "" {
			return nil, fmt.Errorf("provider %q: want letters or digits", p)
		}
		r.providers = append(r.providers, c)
	}
	for _, st := range s.Status {
		if st < 100 || st > 599 {
			return nil, fmt.Errorf("status %d: want 100 to 599", st)
		}
	}
	if coversErrorStatuses(s.Status) {
		return nil, errors.New("status: the list covers every error status (400 to 599) and would match any failure")
	}
	r.status = s.Status
	for _, c := range s.Codes {
		if strings.TrimSpace(c) == "" {
			return nil, errors.New("empty code")
		}
	}
	r.codes = s.Codes
	norm := func(field string, in []string, short bool) ([]string, error) {
		out := make([]string, 0, len(in))
		for _, p := range in {
			n := match.Normalize(p)
			if n == "" {
				return nil, fmt.Errorf("%s: empty phrase", field)
			}
			if !short && phraseWeight(n) < minPhraseWeight {
				return nil, fmt.Errorf("%s: phrase %q is too short to mean anything (want at least %d letters or digits)", field, p, minPhraseWeight)
			}
			out = append(out, n)
		}
		return out, nil
	}
	if r.match, err = norm("match", s.Match, false); err != nil {
		return nil, err
	}
	if r.all, err = norm("all", s.All, false); err != nil {
		return nil, err
	}
	if r.also, err = norm("also", s.Also, false); err != nil {
		return nil, err
	}
	if r.unless, err = norm("unless", s.Unless, true); err != nil { // a short 'unless' only narrows
		return nil, err
	}
	if s.Regex != "" {
		if len(s.Regex) > maxRegexLen {
			// Matching costs the text's length times the program's size.
			return nil, fmt.Errorf("regex: longer than %d bytes; prefer phrases", maxRegexLen)
		}
		if r.re, err = regexp.Compile("(?i)" + s.Regex); err != nil {
			return nil, fmt.Errorf("regex: %v", err)
		}
		if probe, ok := matchesAnything(r.re); ok {
			return nil, fmt.Errorf("regex %q matches %q and so nearly any text", s.Regex, probe)
		}
	}
	if r.clauses, err = parseClauses(s.Clause); err != nil {
		return nil, err
	}
	switch s.Numbers {
	case "":
	case "over":
		r.over = true
	case "budget":
		r.budget = true
	default:
		return nil, fmt.Errorf("numbers %q: want over or budget", s.Numbers)
	}
	if len(r.status) == 0 && len(r.codes) == 0 && len(r.match) == 0 && len(r.all) == 0 && r.re == nil && len(r.clauses) == 0 {
		return nil, errors.New("needs at least one of status, codes, match, all, clause or regex")
	}
	if s.Tier != "" {
		if r.tier, err = parseTier(s.Tier); err != nil {
			return nil, err
		}
	} else {
		r.tier = defaultTier(r)
	}
	if (r.class == Unknown) != (r.tier == tierOutside) {
		return nil, errors.New("class unknown and tier outside go together: a rule that says a text reports no failure of a model request has both, and no other rule has either")
	}
	if r.class == Unknown && (r.exhausted || r.firm || r.over || r.budget) {
		return nil, errors.New("class unknown: exhausted, firm and numbers do not apply")
	}
	if r.exhausted && len(r.codes) == 0 && len(r.match) == 0 && len(r.all) == 0 && r.re == nil {
		return nil, errors.New("exhausted: the rule must read text (codes, match, all or regex)")
	}
	return r, nil
}

// minPhraseWeight is the least weight of a match, all or also phrase.
const minPhraseWeight = 3

// phraseWeight counts the letters and digits of a phrase; a Han, kana or
// Hangul character, a word or a syllable alone, counts as two.
func phraseWeight(p string) int {
	w := 0
	for _, r := range p {
		switch {
		case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul):
			w += 2
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			w++
		}
	}
	return w
}

// anythingProbes are texts no useful regular expression matches: nothing,
// single characters and plain prose.
var anythingProbes = [...]string{"", " ", "a", "Z", "0", "9", ".", ":", "!", "\n", "é", "中",
	"ok", "The quick brown fox jumps over the lazy dog."}

// matchesAnything returns the first probe re matches.
func matchesAnything(re *regexp.Regexp) (string, bool) {
	for _, p := range anythingProbes {
		if re.MatchString(p) {
			return p, true
		}
	}
	return "", false
}

// coversErrorStatuses reports whether statuses list every status from 400
// to 599.
func coversErrorStatuses(statuses []int) bool {
	if len(statuses) < 200 {
		return false
	}
	var seen [200]bool
	n := 0
	for _, st := range statuses {
		if st >= 400 && st <= 599 && !seen[st-400] {
			seen[st-400] = true
			n++
		}
	}
	return n == 200
}
