// Package models holds a table of model limits: how many tokens a model's
// context window holds and how many it may write in one response.
//
// The limits let a caller tell an early length stop (the model stopped on
// "length" well below its output limit because the context window filled)
// from a genuine output-limit stop. The default table is embedded from
// models.yaml; a host can load its own file with Parse and lay it over the
// defaults with Overlay.
package models

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// Limits are the token limits of one model. A zero field is unknown.
type Limits struct {
	// ContextWindow is the number of tokens the model accepts in one
	// request, prompt and output together.
	ContextWindow int
	// MaxOutput is the number of tokens the model may write in one response.
	MaxOutput int
}

// Entry is one model of a Table, as written in its file.
type Entry struct {
	// Provider is the provider's id, in lower case (for example "anthropic").
	Provider string
	// ID is the model id, in lower case (for example "claude-sonnet-4-5").
	ID string
	// Aliases are other exact ids of the same model, in lower case.
	Aliases []string
	// Prefixes are id prefixes that resolve to this entry, in lower case.
	Prefixes []string
	// Limits are the model's token limits.
	Limits Limits
	// Source is the documentation URL for the numbers.
	Source string
	// Line is the line of the entry in its file, 0 when not known.
	Line int
}

// Table is a read-only set of model limits. Its methods are safe for
// concurrent use. The zero Table is empty; a nil *Table is empty too.
type Table struct {
	entries []Entry
	exact   map[string]int // "provider\x00id" and "\x00id" → index of the entry
	alias   map[string]int // same keys, aliases only
	prefix  []prefixKey    // longest first
	known   map[string]bool
}

type prefixKey struct {
	provider string
	prefix   string
	index    int
}

// MaxFileSize is the largest model file Parse accepts, in bytes.
const MaxFileSize = 1 << 20

// fileEntry is one entry as the YAML file spells it.
type fileEntry struct {
	Provider      string   `yaml:"provider"`
	ID            string   `yaml:"id"`
	Aliases       []string `yaml:"aliases"`
	Prefixes      []string `yaml:"prefixes"`
	ContextWindow int      `yaml:"context_window"`
	MaxOutput     int      `yaml:"max_output"`
	Source        string   `yaml:"source"`
}

type fileDoc struct {
	Models []fileEntry `yaml:"models"`
}

// Parse reads a model file. Name is used in error messages, which have the
// form "name:line: message". The file must be at most MaxFileSize bytes; an
// unknown field, a repeated key, a missing or non-positive limit, an output
// limit above the context window, a missing source, an id or alias given
// twice for one provider and a second YAML document are errors.
func Parse(name string, data []byte) (*Table, error) {
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("%s: file is %d bytes, more than the %d allowed", name, len(data), MaxFileSize)
	}
	var doc fileDoc
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return &Table{}, nil
		}
		return nil, yamlError(name, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		line := extra.Line
		if err != nil {
			return nil, yamlError(name, err)
		}
		return nil, fmt.Errorf("%s:%d: a second YAML document; a model file holds one", name, line)
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, yamlError(name, err)
	}
	lines := entryLines(&root)
	entries := make([]Entry, 0, len(doc.Models))
	for i, fe := range doc.Models {
		line := 0
		if i < len(lines) {
			line = lines[i]
		}
		e, err := checkEntry(fe, line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		entries = append(entries, e)
	}
	t, err := build(entries, true)
	if err != nil {
		return nil, fmt.Errorf("%s:%w", name, err)
	}
	return t, nil
}

// yamlError turns a decoder error into "name:line: message", the form of
// Parse's own errors; the decoder writes "yaml: line N: message".
func yamlError(name string, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msg = strings.Join(te.Errors, "; ")
	}
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if i := strings.Index(rest, ": "); i > 0 && digits(rest[:i]) {
			return fmt.Errorf("%s:%s: %s", name, rest[:i], rest[i+2:])
		}
	}
	return fmt.Errorf("%s: %s", name, msg)
}

// entryLines returns the line of each item of the top-level "models" list.
func entryLines(root *yaml.Node) []int {
	if root == nil || root.Kind != yaml.DocumentNode || len(root.Content) == 0 {
		return nil
	}
	m := root.Content[0]
	if m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value != "models" || m.Content[i+1].Kind != yaml.SequenceNode {
			continue
		}
		var lines []int
		for _, item := range m.Content[i+1].Content {
			lines = append(lines, item.Line)
		}
		return lines
	}
	return nil
}

func checkEntry(fe fileEntry, line int) (Entry, error) {
	e := Entry{
		Provider: normalize(fe.Provider),
		ID:       normalize(fe.ID),
		Limits:   Limits{ContextWindow: fe.ContextWindow, MaxOutput: fe.MaxOutput},
		Source:   strings.TrimSpace(fe.Source),
		Line:     line,
	}
	switch {
	case e.Provider == "":
		return e, errors.New("entry has no provider")
	case e.ID == "":
		return e, errors.New("entry has no id")
	case e.Limits.ContextWindow <= 0:
		return e, fmt.Errorf("model %s: context_window must be a positive number of tokens", e.ID)
	case e.Limits.MaxOutput <= 0:
		return e, fmt.Errorf("model %s: max_output must be a positive number of tokens", e.ID)
	case e.Limits.MaxOutput > e.Limits.ContextWindow:
		return e, fmt.Errorf("model %s: max_output %d is larger than context_window %d", e.ID, e.Limits.MaxOutput, e.Limits.ContextWindow)
	case !strings.HasPrefix(e.Source, "https://") && !strings.HasPrefix(e.Source, "http://"):
		return e, fmt.Errorf("model %s: source must be the URL of the documentation for its numbers", e.ID)
	}
	for _, a := range fe.Aliases {
		if a = normalize(a); a == "" {
			return e, fmt.Errorf("model %s: empty alias", e.ID)
		}
		e.Aliases = append(e.Aliases, a)
	}
	for _, p := range fe.Prefixes {
		if p = normalize(p); p == "" {
			return e, fmt.Errorf("model %s: empty prefix", e.ID)
		}
		e.Prefixes = append(e.Prefixes, p)
	}
	return e, nil
}

// build indexes entries. With strict set, an id or alias given twice for one
// provider is an error; otherwise a later entry wins.
func build(entries []Entry, strict bool) (*Table, error) {
	t := &Table{
		entries: entries,
		exact:   make(map[string]int, 2*len(entries)),
		alias:   make(map[string]int),
		known:   make(map[string]bool),
	}
	seen := make(map[string]int, len(entries))
	for i, e := range entries {
		t.known[e.Provider] = true
		for _, k := range append([]string{e.ID}, e.Aliases...) {
			pk := e.Provider + "\x00" + k
			if j, dup := seen[pk]; dup && strict && j != i {
				return nil, fmt.Errorf("%d: model %s: id %q of provider %s is already used by the entry at line %d", e.Line, e.ID, k, e.Provider, entries[j].Line)
			}
			seen[pk] = i
		}
	}
	// Exact ids first, then aliases; within a kind the first entry in file
	// order answers an id-only lookup.
	for i, e := range entries {
		setFirst(t.exact, e.Provider+"\x00"+e.ID, i)
		setFirst(t.exact, "\x00"+e.ID, i)
	}
	for i, e := range entries {
		for _, a := range e.Aliases {
			setFirst(t.alias, e.Provider+"\x00"+a, i)
			setFirst(t.alias, "\x00"+a, i)
		}
		for _, p := range e.Prefixes {
			t.prefix = append(t.prefix, prefixKey{provider: e.Provider, prefix: p, index: i})
		}
	}
	sort.SliceStable(t.prefix, func(a, b int) bool { return len(t.prefix[a].prefix) > len(t.prefix[b].prefix) })
	return t, nil
}

func setFirst(m map[string]int, k string, i int) {
	if _, ok := m[k]; !ok {
		m[k] = i
	}
}

// Len returns the number of entries.
func (t *Table) Len() int {
	if t == nil {
		return 0
	}
	return len(t.entries)
}

// Entries returns a copy of the entries in file order.
func (t *Table) Entries() []Entry {
	if t == nil {
		return nil
	}
	out := make([]Entry, len(t.entries))
	for i, e := range t.entries {
		e.Aliases = append([]string(nil), e.Aliases...)
		e.Prefixes = append([]string(nil), e.Prefixes...)
		out[i] = e
	}
	return out
}

// Lookup returns the limits of a model. Provider and model are compared
// without regard to case; provider may be empty, and a provider the table
// does not know (a router or gateway) is treated as empty. A model id with a
// routing path ("anthropic/claude-sonnet-4-5") is also tried by its last
// element. The order is: the exact id, then an alias, then the same two
// with a trailing date or version stamp removed (so "claude-sonnet-4-5-20250929"
// and "gpt-4o-2024-08-06" resolve to their family), then the longest
// matching prefix.
func (t *Table) Lookup(provider, model string) (Limits, bool) {
	if t == nil || len(t.entries) == 0 {
		return Limits{}, false
	}
	p := normalize(provider)
	if !t.known[p] {
		p = ""
	}
	m := normalize(model)
	if m == "" {
		return Limits{}, false
	}
	if i, ok := t.find(p, m); ok {
		return t.entries[i].Limits, true
	}
	if j := strings.LastIndexByte(m, '/'); j >= 0 && j+1 < len(m) {
		if i, ok := t.find(p, m[j+1:]); ok {
			return t.entries[i].Limits, true
		}
	}
	return Limits{}, false
}

func (t *Table) find(p, m string) (int, bool) {
	if i, ok := t.exactOrAlias(p, m); ok {
		return i, true
	}
	if s := stripStamp(m); s != m {
		if i, ok := t.exactOrAlias(p, s); ok {
			return i, true
		}
	}
	for _, k := range t.prefix {
		if p != "" && k.provider != p {
			continue
		}
		if hasPrefixAtBoundary(m, k.prefix) {
			return k.index, true
		}
	}
	return 0, false
}

func (t *Table) exactOrAlias(p, m string) (int, bool) {
	key := p + "\x00" + m
	if i, ok := t.exact[key]; ok {
		return i, true
	}
	if i, ok := t.alias[key]; ok {
		return i, true
	}
	return 0, false
}

// hasPrefixAtBoundary reports whether m is prefix, or starts with prefix
// followed by a separator.
func hasPrefixAtBoundary(m, prefix string) bool {
	if !strings.HasPrefix(m, prefix) {
		return false
	}
	if len(m) == len(prefix) {
		return true
	}
	switch m[len(prefix)] {
	case '-', '.', ':', '@', '/', '_':
		return true
	}
	return false
}

// stripStamp removes one trailing date or version stamp: "-20250929",
// "-2024-08-06", "-001", "-0905", "-latest".
func stripStamp(m string) string {
	if s, ok := strings.CutSuffix(m, "-latest"); ok && s != "" {
		return s
	}
	// -YYYY-MM-DD
	if n := len(m); n > 11 && m[n-11] == '-' && m[n-6] == '-' && m[n-3] == '-' &&
		digits(m[n-10:n-6]) && digits(m[n-5:n-3]) && digits(m[n-2:]) {
		return m[:n-11]
	}
	// -NNN to -NNNNNNNN
	j := strings.LastIndexByte(m, '-')
	if j > 0 {
		tail := m[j+1:]
		if (len(tail) == 8 || len(tail) == 3 || len(tail) == 4) && digits(tail) {
			return m[:j]
		}
	}
	return m
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func normalize(s string) string {
	return strings.ToLower(strings.TrimSpace(s))
}

// Overlay returns a table holding the entries of over and those of base that
// over does not replace. An entry of over replaces the entry of base with the
// same provider and id; where an alias or prefix of over and one of base
// both match, over's answers (an exact id still comes before any alias).
// Neither argument is changed; a nil argument counts as empty.
func Overlay(over, base *Table) *Table {
	if over.Len() == 0 {
		if base == nil {
			return &Table{}
		}
		return base
	}
	if base.Len() == 0 {
		return over
	}
	replaced := make(map[string]bool, over.Len())
	for _, e := range over.entries {
		replaced[e.Provider+"\x00"+e.ID] = true
	}
	entries := make([]Entry, 0, over.Len()+base.Len())
	// Over first, so its ids, aliases and prefixes answer before base's.
	entries = append(entries, over.entries...)
	for _, e := range base.entries {
		if !replaced[e.Provider+"\x00"+e.ID] {
			entries = append(entries, e)
		}
	}
	t, _ := build(entries, false) // never fails when not strict
	return t
}

//go:embed models.yaml
var defaultYAML []byte

var defaultTable = sync.OnceValue(func() *Table {
	t, err := Parse("models.yaml", defaultYAML)
	if err != nil {
		return &Table{} // the tests keep the embedded file valid
	}
	return t
})

// Default returns the table embedded from models.yaml. It is parsed once, on
// first use; the table is shared and read-only.
func Default() *Table {
	return defaultTable()
}
