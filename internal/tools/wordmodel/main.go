// Command wordmodel trains the classifier's word model from the labelled
// texts of testdata and writes it as Go data, or measures it.
//
// Usage, from the repository root:
//
//	go run ./internal/tools/wordmodel            # writes internal/wordmodel/weights.go
//	go run ./internal/tools/wordmodel -cv        # cross-validation report, writes nothing
//
// The texts are every entry of testdata/fixtures/*.yaml and
// testdata/misses/*.yaml, labelled with its wanted class. Training is
// deterministic, so the generated file is a function of those texts; a test
// of this command checks that the committed file is current.
//
// Cross-validation is grouped by source: texts from one repository (or one
// site) fall in one fold, so the model is never measured on a source it
// was trained on. Each fold's texts are classified by the rules first, as
// in use: the report counts what the model adds where the rules say
// unknown, and what it would give on every text.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"hash/fnv"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/erradvisor/erradvisor"
	"github.com/erradvisor/erradvisor/internal/wordmodel"
	"go.yaml.in/yaml/v3"
)

// entry is the part of a fixture the model reads.
type entry struct {
	Name     string `yaml:"name"`
	Source   string `yaml:"source"`
	Provider string `yaml:"provider"`
	Status   int    `yaml:"status"`
	Code     string `yaml:"code"`
	Message  string `yaml:"message"`
	Want     struct {
		Class  string `yaml:"class"`
		Reason string `yaml:"reason"`
	} `yaml:"want"`
	Not      []string `yaml:"not"`
	Disputed bool     `yaml:"disputed"`
}

// globs are the texts the model is trained on.
var globs = []string{"testdata/fixtures/*.yaml", "testdata/misses/*.yaml"}

var (
	minP, maxCostly float64
	opts            = wordmodel.DefaultOptions()
)

const outFile = "internal/wordmodel/weights.go"

func main() {
	cv := flag.Bool("cv", false, "print a cross-validation report instead of writing the model")
	folds := flag.Int("folds", 10, "number of folds for -cv")
	flag.Float64Var(&minP, "minp", wordmodel.MinP, "least probability to give a class, for -cv")
	flag.Float64Var(&maxCostly, "maxcostly", wordmodel.MaxCostly, "most probability on costly classes, for -cv")
	flag.Float64Var(&opts.L2, "l2", opts.L2, "weight decay, for -cv")
	flag.IntVar(&opts.Epochs, "epochs", opts.Epochs, "passes, for -cv")
	flag.IntVar(&opts.MinGroups, "mingroups", opts.MinGroups, "least groups per feature, for -cv")
	blind := flag.String("blind", "", "replay blind set `X`: what the model adds where the rules said unknown")
	flag.Parse()
	if *blind != "" {
		entries, err := load(".")
		if err == nil {
			err = blindReplay(os.Stdout, ".", entries, *blind)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "wordmodel:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(os.Stdout, ".", *cv, *folds); err != nil {
		fmt.Fprintln(os.Stderr, "wordmodel:", err)
		os.Exit(1)
	}
}

func run(w io.Writer, root string, cv bool, folds int) error {
	entries, err := load(root)
	if err != nil {
		return err
	}
	if cv {
		return crossValidate(w, entries, folds)
	}
	src, err := generate(entries)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(root, outFile), src, 0o644)
}

// load reads every training entry, in file and then list order.
func load(root string) ([]*entry, error) {
	var all []*entry
	for _, g := range globs {
		files, err := filepath.Glob(filepath.Join(root, g))
		if err != nil {
			return nil, err
		}
		slices.Sort(files)
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				return nil, err
			}
			var list []*entry
			if err := yaml.Unmarshal(data, &list); err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			for _, e := range list {
				if e == nil || strings.TrimSpace(e.Message) == "" {
					continue
				}
				if _, ok := wordmodel.ParseClass(e.Want.Class); !ok {
					return nil, fmt.Errorf("%s: %s: unknown class %q", f, e.Name, e.Want.Class)
				}
				all = append(all, e)
			}
		}
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("no texts found under %s; run from the repository root", root)
	}
	return all, nil
}

// group names an entry's source: a GitHub repository, or a site.
func group(source string) string {
	u, err := url.Parse(source)
	if err != nil || u.Host == "" {
		return source
	}
	host := strings.TrimPrefix(u.Host, "www.")
	if host == "github.com" || host == "gitee.com" || host == "gitlab.com" {
		parts := strings.SplitN(strings.Trim(u.Path, "/"), "/", 3)
		if len(parts) >= 2 {
			return host + "/" + strings.ToLower(parts[0]+"/"+parts[1])
		}
	}
	return host
}

func docs(entries []*entry) []wordmodel.Doc {
	out := make([]wordmodel.Doc, len(entries))
	for i, e := range entries {
		c, _ := wordmodel.ParseClass(e.Want.Class)
		out[i] = wordmodel.Doc{Status: e.Status, Text: e.Message, Class: c, Group: group(e.Source)}
	}
	return out
}

// generate trains on every entry and returns the Go source of the model.
func generate(entries []*entry) ([]byte, error) {
	m := wordmodel.Train(docs(entries), wordmodel.DefaultOptions())
	var b bytes.Buffer
	b.WriteString("// Code generated by internal/tools/wordmodel; DO NOT EDIT.\n\n")
	fmt.Fprintf(&b, "package wordmodel\n\n// generated is trained on %d texts of testdata/fixtures and testdata/misses.\n", len(entries))
	fmt.Fprintf(&b, "var generated = Weights{\n\tScale: %v,\n\tBias: [NumClasses]int32{", m.Scale)
	for i, v := range m.Bias {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprint(&b, v)
	}
	b.WriteString("},\n\tKeys: []uint32{\n")
	for i, k := range m.Keys {
		if i%8 == 0 {
			b.WriteString("\t\t")
		}
		fmt.Fprintf(&b, "%#08x,", k)
		if i%8 == 7 || i == len(m.Keys)-1 {
			b.WriteString("\n")
		} else {
			b.WriteString(" ")
		}
	}
	b.WriteString("\t},\n\tW: []int8{\n")
	n := int(wordmodel.NumClasses)
	for i := 0; i < len(m.Keys); i++ {
		b.WriteString("\t\t")
		for c, v := range m.W[i*n : (i+1)*n] {
			if c > 0 {
				b.WriteString(" ")
			}
			fmt.Fprintf(&b, "%d,", v)
		}
		b.WriteString("\n")
	}
	b.WriteString("\t},\n}\n")
	return format.Source(b.Bytes())
}

// fold assigns a group to one of k folds.
func fold(g string, k int) int {
	h := fnv.New32a()
	h.Write([]byte(g))
	return int(h.Sum32() % uint32(k))
}

// costly reports whether giving class got to e is a costly mistake: a class
// its `not` list forbids.
func costly(e *entry, got string) bool { return slices.Contains(e.Not, got) }

// tally counts a model's verdicts on labelled texts.
type tally struct {
	given, right, costly, costlyUndisputed int
}

// add counts the verdict got on e and returns how it went: "right",
// "wrong" or "COSTLY".
func (t *tally) add(e *entry, got string) string {
	t.given++
	mark := "wrong"
	if got == e.Want.Class {
		t.right++
		mark = "right"
	}
	if costly(e, got) {
		t.costly++
		mark = "COSTLY"
		if !e.Disputed {
			t.costlyUndisputed++
		}
	}
	return mark
}

func (t tally) String() string {
	if t.given == 0 {
		return "0 given"
	}
	return fmt.Sprintf("%d given, %d right (%.1f%%), %d costly (%d undisputed)",
		t.given, t.right, 100*float64(t.right)/float64(t.given), t.costly, t.costlyUndisputed)
}

// crossValidate trains on all folds but one and measures on that one, for
// each fold.
func crossValidate(w io.Writer, entries []*entry, k int) error {
	if k < 2 {
		return fmt.Errorf("need at least 2 folds, not %d", k)
	}
	ds := docs(entries)
	var ruleUnknown, all tally
	var wrongs []string
	for f := 0; f < k; f++ {
		var train []wordmodel.Doc
		var test []int
		for i, d := range ds {
			if fold(d.Group, k) == f {
				test = append(test, i)
			} else {
				train = append(train, d)
			}
		}
		m := wordmodel.Train(train, opts)
		for _, i := range test {
			e := entries[i]
			g := m.GuessAt(e.Status, e.Message, minP, maxCostly)
			if g.Class == wordmodel.Unknown {
				continue
			}
			got := g.Class.String()
			all.add(e, got)
			cl := erradvisor.Classify(erradvisor.Failure{Provider: e.Provider, Status: e.Status, Code: e.Code, Message: e.Message})
			if cl.Evidence == erradvisor.EvidenceNone || cl.Evidence == erradvisor.EvidenceWords {
				if ruleUnknown.add(e, got) != "right" {
					wrongs = append(wrongs, fmt.Sprintf("  %s: want %s, model %s (p %.2f)", e.Name, e.Want.Class, got, g.P))
				}
			}
		}
	}
	fmt.Fprintf(w, "%d texts, %d folds grouped by source; model settings %+v, MinP %v, MaxCostly %v\n",
		len(entries), k, opts, wordmodel.MinP, wordmodel.MaxCostly)
	fmt.Fprintf(w, "on every held-out text: %v\n", all)
	fmt.Fprintf(w, "on held-out texts the rules leave unknown: %v\n", ruleUnknown)
	for _, s := range wrongs {
		fmt.Fprintln(w, s)
	}
	return nil
}

// blindReplay measures what the model would have added to the blind score
// of set x: it trains without the texts of round x and of every later
// round, and classifies the texts of setX.yaml that the rules left unknown
// when the set was scored (read from setX-score.md; a verdict the word model
// gave then counts as unknown to the rules).
func blindReplay(w io.Writer, root string, entries []*entry, x string) error {
	x = strings.ToLower(x)
	var train []*entry
	for _, e := range entries {
		if r, ok := round(e.Name); ok && r >= x {
			continue
		}
		train = append(train, e)
	}
	data, err := os.ReadFile(filepath.Join(root, "testdata/blind/set"+strings.ToUpper(x)+".yaml"))
	if err != nil {
		return err
	}
	var set []*entry
	if err := yaml.Unmarshal(data, &set); err != nil {
		return err
	}
	report, err := os.ReadFile(filepath.Join(root, "testdata/blind/set"+strings.ToUpper(x)+"-score.md"))
	if err != nil {
		return err
	}
	got := map[string]string{}
	for _, line := range strings.Split(string(report), "\n") {
		f := strings.Split(line, "|")
		if len(f) > 4 && strings.HasPrefix(strings.TrimSpace(f[1]), "`") {
			g := strings.TrimSpace(f[3])
			if strings.HasPrefix(strings.Trim(strings.TrimSpace(f[4]), "`"), "words.") {
				// A verdict of the word model itself: no rule read the text.
				g = "unknown/"
			}
			got[strings.Trim(strings.TrimSpace(f[1]), "`")] = g
		}
	}
	m := wordmodel.Train(docs(train), opts)
	var t tally
	pool := 0
	for _, e := range set {
		g, listed := got[e.Name]
		if listed && !strings.HasPrefix(g, "unknown/") || !listed && e.Want.Class != "unknown" {
			continue
		}
		pool++
		v := m.GuessAt(e.Status, e.Message, minP, maxCostly)
		if v.Class == wordmodel.Unknown {
			continue
		}
		c := v.Class.String()
		mark := t.add(e, c)
		fmt.Fprintf(w, "  %s %s: want %s, model %s (p %.2f, disputed %v)\n", mark, e.Name, e.Want.Class, c, v.P, e.Disputed)
	}
	fmt.Fprintf(w, "set %s: %d texts the rules left unknown; trained on %d texts; %v\n", strings.ToUpper(x), pool, len(train), t)
	return nil
}

// round returns the blind round of a name such as "blindQ2-..." ("q").
func round(name string) (string, bool) {
	if !strings.HasPrefix(name, "blind") || len(name) < 6 {
		return "", false
	}
	c := name[5]
	if c < 'A' || c > 'Z' {
		return "", false
	}
	return strings.ToLower(string(c)), true
}
