package erradvisor

import (
	_ "embed"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// The rule format (rules, concepts, tiers) is documented in the package
// documentation, doc.go, so that go doc shows it.

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
	// File and Line say where the rule is defined.
	File string
	Line int
}

// Name returns the name the set was parsed under (a file path for files,
// "rules.yaml" for the defaults).
func (s *RuleSet) Name() string { return s.name }

// Rules describes the rules of the set, in order.
func (s *RuleSet) Rules() []RuleInfo {
	out := make([]RuleInfo, len(s.rules))
	for i, r := range s.rules {
		out[i] = RuleInfo{
			ID: r.id, Class: r.class, Reason: r.reason, Description: r.description,
			Providers: slices.Clone(r.providers), Status: slices.Clone(r.status),
			Codes: slices.Clone(r.codes), Disabled: r.disabled, Tier: r.tier.String(), File: s.name, Line: r.line,
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

// Error implements error: "file:line: rule "id": problem".
func (e *RuleError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Rule != "" {
		fmt.Fprintf(&b, ": rule %q", e.Rule)
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	return b.String()
}

// Unwrap returns the underlying error.
func (e *RuleError) Unwrap() error { return e.Err }

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
	examples    []string
	not         []string
	line        int
	tier        tier
	clauses     [][]string // concept names that must meet in one clause, per entry

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
	Examples    []string `yaml:"examples"`
	Not         []string `yaml:"not"`
	Tier        string   `yaml:"tier"`
	Clause      []string `yaml:"clause"`
}

var ruleKeys = []string{"id", "class", "reason", "description", "providers", "status", "codes",
	"match", "all", "also", "unless", "regex", "disabled", "firm", "examples", "not", "tier", "clause"}

// maxRuleFileSize bounds what ParseRules reads.
const maxRuleFileSize = 1 << 20

// ParseRules parses and validates a YAML rule document. name is used in
// errors (a file path, typically). Every rule's examples must match it and
// its `not` texts must not. Errors are *RuleError values naming the file,
// the line and the rule.
func ParseRules(name string, data []byte) (*RuleSet, error) {
	fail := func(line int, id string, format string, args ...any) error {
		return &RuleError{File: name, Line: line, Rule: id, Err: fmt.Errorf(format, args...)}
	}
	if len(data) > maxRuleFileSize {
		return nil, fail(0, "", "file larger than %d bytes", maxRuleFileSize)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, &RuleError{File: name, Line: yamlErrorLine(err), Err: err}
	}
	set := &RuleSet{name: name}
	if len(doc.Content) == 0 {
		return set, nil // an empty document has no rules
	}
	top := doc.Content[0]
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
		list = top.Content[i+1]
	}
	if list == nil || list.Tag == "!!null" {
		return set, nil
	}
	if list.Kind != yaml.SequenceNode {
		return nil, fail(list.Line, "", "'rules' must be a list")
	}
	seen := map[string]bool{}
	for _, n := range list.Content {
		if n.Kind != yaml.MappingNode {
			return nil, fail(n.Line, "", "a rule must be a mapping")
		}
		id := ""
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if !slices.Contains(ruleKeys, k.Value) {
				return nil, fail(k.Line, ruleID(n), "unknown field %q", k.Value)
			}
			if k.Value == "id" {
				id = n.Content[i+1].Value
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
		r.line = n.Line
		set.rules = append(set.rules, r)
	}
	// Run every rule's examples against the rule alone.
	c, err := newClassifier(set)
	if err != nil {
		return nil, &RuleError{File: name, Err: err}
	}
	buf := make([]uint64, (c.m.nphrase+63)/64)
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

// LoadRuleFile reads and parses a rule file.
func LoadRuleFile(path string) (*RuleSet, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &RuleError{File: path, Err: err}
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
		examples: s.Examples, not: s.Not}
	if s.Disabled {
		return r, nil // a disabled rule only hides a lower one
	}
	cl, err := ParseClass(s.Class)
	if err != nil || cl == Unknown {
		return nil, fmt.Errorf("class %q: want transient, overflow, quota, billing, permanent or canceled", s.Class)
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
	r.status = s.Status
	for _, c := range s.Codes {
		if strings.TrimSpace(c) == "" {
			return nil, errors.New("empty code")
		}
	}
	r.codes = s.Codes
	norm := func(field string, in []string) ([]string, error) {
		out := make([]string, 0, len(in))
		for _, p := range in {
			n := normalizePhrase(p)
			if n == "" {
				return nil, fmt.Errorf("%s: empty phrase", field)
			}
			out = append(out, n)
		}
		return out, nil
	}
	if r.match, err = norm("match", s.Match); err != nil {
		return nil, err
	}
	if r.all, err = norm("all", s.All); err != nil {
		return nil, err
	}
	if r.also, err = norm("also", s.Also); err != nil {
		return nil, err
	}
	if r.unless, err = norm("unless", s.Unless); err != nil {
		return nil, err
	}
	if s.Regex != "" {
		if r.re, err = regexp.Compile("(?i)" + s.Regex); err != nil {
			return nil, fmt.Errorf("regex: %v", err)
		}
	}
	if r.clauses, err = parseClauses(s.Clause); err != nil {
		return nil, err
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
	return r, nil
}
