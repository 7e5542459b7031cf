// Command blindscore scores the classifier on a blind set of real error texts.
//
// Usage, from the repository root:
//
//	go run ./internal/tools/blindscore testdata/blind/setA.yaml
//
// The set uses the schema of testdata/fixtures (see its README) plus a
// `disputed` flag for judgement calls. Before scoring, every entry is checked
// against the fixture and misses files: an entry whose message starts like an
// existing text (first 80 characters after normalisation) is reported and
// dropped, and an entry whose source URL is already a fixture's source is
// flagged. The report is Markdown on standard output.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/erradvisor/erradvisor"
	"go.yaml.in/yaml/v3"
)

// entry is one labelled error text: the fixture schema plus Disputed.
type entry struct {
	Name     string            `yaml:"name"`
	Source   string            `yaml:"source"`
	Provider string            `yaml:"provider"`
	Model    string            `yaml:"model"`
	Status   int               `yaml:"status"`
	Code     string            `yaml:"code"`
	Headers  map[string]string `yaml:"headers"`
	Message  string            `yaml:"message"`
	Want     want              `yaml:"want"`
	Not      []string          `yaml:"not"`
	Disputed bool              `yaml:"disputed"`
	Comment  string            `yaml:"comment"`

	file string
}

// want is the expected verdict of an entry.
type want struct {
	Class      string        `yaml:"class"`
	Reason     string        `yaml:"reason"`
	RetryAfter time.Duration `yaml:"retry_after"`
}

// scoredAt is the observation time every entry is classified at.
var scoredAt = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// dedupeLen is how many characters of the normalised message are compared.
const dedupeLen = 80

func main() {
	fixtures := flag.String("fixtures", "testdata/fixtures/*.yaml,testdata/misses/*.yaml",
		"comma-separated globs of the existing texts to dedupe against")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: blindscore [-fixtures globs] set.yaml\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(os.Stdout, flag.Arg(0), strings.Split(*fixtures, ",")); err != nil {
		fmt.Fprintln(os.Stderr, "blindscore:", err)
		os.Exit(1)
	}
}

// run loads the set and the existing texts, scores the set and writes the report.
func run(w io.Writer, setFile string, globs []string) error {
	set, err := loadFile(setFile)
	if err != nil {
		return err
	}
	var existing []*entry
	for _, g := range globs {
		files, err := filepath.Glob(strings.TrimSpace(g))
		if err != nil {
			return fmt.Errorf("glob %q: %w", g, err)
		}
		for _, f := range files {
			list, err := loadFile(f)
			if err != nil {
				return err
			}
			existing = append(existing, list...)
		}
	}
	if len(existing) == 0 {
		return errors.New("no existing fixtures found; run from the repository root or set -fixtures")
	}
	if err := validate(set); err != nil {
		return fmt.Errorf("%s: %w", setFile, err)
	}
	rep := score(set, existing)
	rep.setFile = setFile
	rep.write(w)
	return nil
}

// loadFile reads one YAML list of entries.
func loadFile(file string) ([]*entry, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	list, err := parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	for _, e := range list {
		e.file = file
	}
	return list, nil
}

// parse decodes a YAML list of entries, dropping null items.
func parse(data []byte) ([]*entry, error) {
	var list []*entry
	if err := yaml.Unmarshal(data, &list); err != nil {
		return nil, err
	}
	return slices.DeleteFunc(list, func(e *entry) bool { return e == nil }), nil
}

// validate checks names, sources and labels of a blind set.
func validate(set []*entry) error {
	seen := map[string]bool{}
	for i, e := range set {
		if e.Name == "" {
			return fmt.Errorf("entry %d has no name", i+1)
		}
		if seen[e.Name] {
			return fmt.Errorf("name %q used twice", e.Name)
		}
		seen[e.Name] = true
		if !strings.HasPrefix(e.Source, "http") {
			return fmt.Errorf("%s: source must be a URL", e.Name)
		}
		if e.Message == "" {
			return fmt.Errorf("%s: empty message", e.Name)
		}
		if err := new(erradvisor.Class).UnmarshalText([]byte(e.Want.Class)); err != nil {
			return fmt.Errorf("%s: %w", e.Name, err)
		}
		for _, n := range e.Not {
			if err := new(erradvisor.Class).UnmarshalText([]byte(n)); err != nil {
				return fmt.Errorf("%s: not: %w", e.Name, err)
			}
		}
	}
	return nil
}

// normalize lower-cases s, turns every run of characters that are neither
// letters nor digits into one space, and trims the result.
func normalize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(unicode.ToLower(r))
			continue
		}
		space = true
	}
	return b.String()
}

// dedupeKey is the first dedupeLen characters of the normalised message.
func dedupeKey(s string) string {
	n := normalize(s)
	i := 0
	for pos := range n {
		if i == dedupeLen {
			return n[:pos]
		}
		i++
	}
	return n
}

// collision is a blind entry dropped because an existing text starts the same.
type collision struct {
	name, with, file string
}

// result is the verdict on one scored entry.
type result struct {
	e                   *entry
	gotClass, gotReason string
	rule                string
	costly              string // why the mistake is costly, "" when it is not
}

func (r result) classOK() bool  { return r.gotClass == r.e.Want.Class }
func (r result) reasonOK() bool { return r.classOK() && r.gotReason == r.e.Want.Reason }

// report is the outcome of scoring a set.
type report struct {
	setFile     string
	collisions  []collision
	sameSources []collision
	results     []result
}

// score dedupes set against existing and classifies what remains.
func score(set, existing []*entry) report {
	var rep report
	keys := make(map[string]*entry, len(existing))
	sources := make(map[string]*entry, len(existing))
	for _, e := range existing {
		if k := dedupeKey(e.Message); k != "" {
			if _, ok := keys[k]; !ok {
				keys[k] = e
			}
		}
		if s := strings.TrimSpace(e.Source); s != "" {
			if _, ok := sources[s]; !ok {
				sources[s] = e
			}
		}
	}
	for _, e := range set {
		if x, ok := sources[strings.TrimSpace(e.Source)]; ok {
			rep.sameSources = append(rep.sameSources, collision{e.Name, x.Name, x.file})
		}
		if x, ok := keys[dedupeKey(e.Message)]; ok {
			rep.collisions = append(rep.collisions, collision{e.Name, x.Name, x.file})
			continue
		}
		rep.results = append(rep.results, classify(e))
	}
	return rep
}

// classify runs the classifier on one entry and judges the verdict.
func classify(e *entry) result {
	f := erradvisor.Failure{Provider: e.Provider, Model: e.Model, Status: e.Status, Code: e.Code,
		Message: e.Message, At: scoredAt}
	if len(e.Headers) > 0 {
		f.Header = http.Header{}
		for k, v := range e.Headers {
			f.Header.Set(k, v)
		}
	}
	c := erradvisor.Classify(f)
	r := result{e: e, gotClass: c.Class.String(), gotReason: string(c.Reason), rule: c.Rule}
	r.costly = costly(e.Want.Class, r.gotClass, e.Not)
	return r
}

// costly says why getting got for want is a costly mistake, or "" when it is not.
func costly(want, got string, not []string) string {
	switch {
	case want == got:
		return ""
	case slices.Contains(not, got):
		return "got a class the entry forbids"
	case got == "transient" && slices.Contains([]string{"overflow", "quota", "billing", "permanent"}, want):
		return "retries what cannot succeed"
	case got == "overflow" && (want == "transient" || want == "quota"):
		return "compacts for nothing"
	}
	return ""
}

var classOrder = []string{"unknown", "transient", "overflow", "quota", "billing", "permanent", "canceled"}

func pct(n, d int) string {
	if d == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(d))
}

// write prints the report as Markdown.
func (rep report) write(w io.Writer) {
	total := len(rep.results)
	var classOK, reasonOK, undisputed, undisputedOK, costlyN int
	conf := map[[2]string]int{}
	for _, r := range rep.results {
		conf[[2]string{r.e.Want.Class, r.gotClass}]++
		if r.classOK() {
			classOK++
		}
		if r.reasonOK() {
			reasonOK++
		}
		if !r.e.Disputed {
			undisputed++
			if r.classOK() {
				undisputedOK++
			}
		}
		if r.costly != "" {
			costlyN++
		}
	}
	fmt.Fprintf(w, "# Blind score: %s\n\n", filepath.ToSlash(rep.setFile))
	fmt.Fprintf(w, "Classified with `erradvisor.Classify` at %s.\n\n", scoredAt.Format(time.RFC3339))
	fmt.Fprintf(w, "## Dedupe\n\n")
	if len(rep.collisions) == 0 {
		fmt.Fprintf(w, "No message starts like an existing fixture or misses text (first %d normalised characters).\n\n", dedupeLen)
	} else {
		fmt.Fprintf(w, "Dropped, because an existing text starts the same (first %d normalised characters):\n\n", dedupeLen)
		for _, c := range rep.collisions {
			fmt.Fprintf(w, "- `%s` = `%s` (%s)\n", c.name, c.with, filepath.ToSlash(c.file))
		}
		fmt.Fprintln(w)
	}
	if len(rep.sameSources) == 0 {
		fmt.Fprintf(w, "No source URL is already a fixture's source.\n\n")
	} else {
		fmt.Fprintf(w, "Source URL already used by a fixture (flagged, still scored):\n\n")
		for _, c := range rep.sameSources {
			fmt.Fprintf(w, "- `%s`: same source as `%s` (%s)\n", c.name, c.with, filepath.ToSlash(c.file))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "## Summary\n\n")
	fmt.Fprintf(w, "| measure | count | share |\n| --- | ---: | ---: |\n")
	fmt.Fprintf(w, "| entries scored | %d | |\n", total)
	fmt.Fprintf(w, "| class correct | %d | %s |\n", classOK, pct(classOK, total))
	fmt.Fprintf(w, "| class correct, undisputed only | %d of %d | %s |\n", undisputedOK, undisputed, pct(undisputedOK, undisputed))
	fmt.Fprintf(w, "| class and reason correct | %d | %s |\n", reasonOK, pct(reasonOK, total))
	fmt.Fprintf(w, "| costly mistakes | %d | %s |\n\n", costlyN, pct(costlyN, total))

	fmt.Fprintf(w, "## Confusion (rows: wanted class, columns: class got)\n\n| want \\ got |")
	for _, c := range classOrder {
		fmt.Fprintf(w, " %s |", c)
	}
	fmt.Fprintf(w, " total | correct |\n| --- |")
	for range classOrder {
		fmt.Fprintf(w, " ---: |")
	}
	fmt.Fprintf(w, " ---: | ---: |\n")
	for _, wc := range classOrder {
		row := 0
		for _, gc := range classOrder {
			row += conf[[2]string{wc, gc}]
		}
		if row == 0 {
			continue
		}
		fmt.Fprintf(w, "| **%s** |", wc)
		for _, gc := range classOrder {
			if n := conf[[2]string{wc, gc}]; n > 0 {
				fmt.Fprintf(w, " %d |", n)
			} else {
				fmt.Fprintf(w, " · |")
			}
		}
		ok := conf[[2]string{wc, wc}]
		fmt.Fprintf(w, " %d | %d (%s) |\n", row, ok, pct(ok, row))
	}
	fmt.Fprintln(w)

	fmt.Fprintf(w, "## Costly mistakes\n\n")
	if costlyN == 0 {
		fmt.Fprintf(w, "None.\n\n")
	} else {
		fmt.Fprintf(w, "| name | want | got | rule | why costly |\n| --- | --- | --- | --- | --- |\n")
		for _, r := range rep.results {
			if r.costly != "" {
				fmt.Fprintf(w, "| `%s` | %s/%s | %s/%s | `%s` | %s |\n", r.e.Name, r.e.Want.Class, r.e.Want.Reason,
					r.gotClass, r.gotReason, r.rule, r.costly)
			}
		}
		fmt.Fprintln(w)
	}

	fmt.Fprintf(w, "## Misses (class or reason wrong)\n\n")
	fmt.Fprintf(w, "| name | want | got | rule | disputed |\n| --- | --- | --- | --- | --- |\n")
	for _, r := range rep.results {
		if r.reasonOK() {
			continue
		}
		d := ""
		if r.e.Disputed {
			d = "yes"
		}
		mark := ""
		if r.classOK() {
			mark = " (reason only)"
		}
		fmt.Fprintf(w, "| `%s` | %s/%s | %s/%s%s | `%s` | %s |\n", r.e.Name, r.e.Want.Class, r.e.Want.Reason,
			r.gotClass, r.gotReason, mark, r.rule, d)
	}
}
