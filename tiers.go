package erradvisor

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/erradvisor/erradvisor/internal/match"
)

// tier is the rank of a rule in the evidence order. Rules of a lower tier
// are tried before rules of a higher one, whatever layer they come from;
// within a tier, the rules of higher-priority layers come first.
type tier uint8

// The tiers, strongest first. See the package documentation of rules.go.
const (
	tierOutside   tier = iota // no failure of a model request: a tool's, an MCP server's, a tracing exporter's
	tierAbort                 // the caller aborted
	tierProvider              // a provider's documented wording or code
	tierHardLimit             // limits waiting does not clear: quotas, budgets, billing, requests too large
	tierRate                  // rate limits and capacity
	tierOverflow              // the prompt does not fit the context window
	tierPermanent             // request and configuration errors
	tierFault                 // server, stream, timeout and network faults
	tierStatus                // the HTTP status, with at most a word of text

	numTiers
)

var tierNames = [numTiers]string{
	tierOutside:   "outside",
	tierAbort:     "abort",
	tierProvider:  "provider",
	tierHardLimit: "hard_limit",
	tierRate:      "rate",
	tierOverflow:  "overflow",
	tierPermanent: "permanent",
	tierFault:     "fault",
	tierStatus:    "status",
}

func (t tier) String() string {
	if t < numTiers {
		return tierNames[t]
	}
	return fmt.Sprintf("tier(%d)", uint8(t))
}

// parseTier returns the tier named s.
func parseTier(s string) (tier, error) {
	for i, n := range tierNames {
		if n == s {
			return tier(i), nil
		}
	}
	return 0, fmt.Errorf("tier %q: want one of %s", s, strings.Join(tierNames[:], ", "))
}

// defaultTier is the tier of a rule that names none: a rule guarded by a
// provider is a provider rule; a rule that reads only the status is a status
// rule; otherwise its class decides.
func defaultTier(r *rule) tier {
	switch {
	case len(r.providers) > 0:
		return tierProvider
	case r.statusOnly():
		return tierStatus
	}
	switch r.class {
	case Unknown:
		return tierOutside
	case Canceled:
		return tierAbort
	case Quota, Billing:
		return tierHardLimit
	case Overflow:
		return tierOverflow
	case Permanent:
		return tierPermanent
	case Transient:
		if r.reason == ReasonRateLimit || r.reason == ReasonOverloaded {
			return tierRate
		}
	}
	return tierFault
}

// maxConcepts bounds the concepts of one Classifier (an element of a
// match.Mask each; the last element marks id markers).
const maxConcepts = match.MaxConcepts

// concept is a named vocabulary: words that all stand for one idea.
type concept struct {
	name  string
	words []string // normalised
	line  int
}

// parseConcepts reads the `concepts:` mapping of a rule file: each key a
// concept name, each value a list of words.
func parseConcepts(n *yaml.Node) ([]concept, error) {
	if n.Tag == "!!null" {
		return nil, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, errors.New("'concepts' must be a mapping of names to lists of words")
	}
	var out []concept
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !validConceptName(k.Value) {
			return nil, fmt.Errorf("line %d: concept name %q: want lower-case letters, digits or '_'", k.Line, k.Value)
		}
		if slices.ContainsFunc(out, func(c concept) bool { return c.name == k.Value }) {
			return nil, fmt.Errorf("line %d: concept %q defined twice", k.Line, k.Value)
		}
		var words []string
		if err := v.Decode(&words); err != nil {
			return nil, fmt.Errorf("line %d: concept %q: want a list of words", v.Line, k.Value)
		}
		c := concept{name: k.Value, line: k.Line}
		for _, w := range words {
			nw := match.Normalize(w)
			if nw == "" {
				return nil, fmt.Errorf("line %d: concept %q: empty word", v.Line, k.Value)
			}
			if !slices.Contains(c.words, nw) {
				c.words = append(c.words, nw)
			}
		}
		if len(c.words) == 0 {
			return nil, fmt.Errorf("line %d: concept %q has no words", v.Line, k.Value)
		}
		out = append(out, c)
	}
	return out, nil
}

func validConceptName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// parseClauses reads a rule's `clause` entries: each a '+'-joined list of
// concept names ("quota + excess").
func parseClauses(in []string) ([][]string, error) {
	var out [][]string
	for _, e := range in {
		var names []string
		for _, p := range strings.Split(e, "+") {
			p = strings.TrimSpace(p)
			if !validConceptName(p) {
				return nil, fmt.Errorf("clause %q: concept name %q: want lower-case letters, digits or '_'", e, p)
			}
			if !slices.Contains(names, p) {
				names = append(names, p)
			}
		}
		out = append(out, names)
	}
	return out, nil
}

// defaultConcepts are the concepts of the embedded rule file, read alone so
// that a user rule file can name them without defining them.
var defaultConcepts = sync.OnceValues(func() ([]concept, error) {
	var doc struct {
		Concepts yaml.Node `yaml:"concepts"`
	}
	if err := yaml.Unmarshal(defaultRulesYAML, &doc); err != nil {
		return nil, err
	}
	if doc.Concepts.Kind == 0 {
		return nil, nil
	}
	return parseConcepts(&doc.Concepts)
})

// mergeConcepts joins the vocabularies of the layers: a concept named in
// several layers has the words of all of them. Concepts of the defaults are
// always known.
func mergeConcepts(layers []*RuleSet) ([]concept, error) {
	var out []concept
	add := func(cs []concept) {
		for _, c := range cs {
			i := slices.IndexFunc(out, func(o concept) bool { return o.name == c.name })
			if i < 0 {
				out = append(out, concept{name: c.name, words: slices.Clone(c.words), line: c.line})
				continue
			}
			for _, w := range c.words {
				if !slices.Contains(out[i].words, w) {
					out[i].words = append(out[i].words, w)
				}
			}
		}
	}
	for _, l := range layers {
		if l != nil {
			add(l.concepts)
		}
	}
	d, err := defaultConcepts()
	if err != nil {
		return nil, err
	}
	add(d)
	if len(out) > maxConcepts {
		return nil, fmt.Errorf("%d concepts, at most %d", len(out), maxConcepts)
	}
	return out, nil
}

// orderByTier sorts rules (already in layer order, highest layer first) by
// tier, keeping the layer order within a tier.
func orderByTier(rules []*rule) {
	slices.SortStableFunc(rules, func(a, b *rule) int { return int(a.tier) - int(b.tier) })
}
