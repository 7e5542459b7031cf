package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/erradvisor/erradvisor"
	"github.com/erradvisor/erradvisor/internal/wordmodel"
)

// explanation is what explain reports about one failure; its JSON form is
// the --json output.
type explanation struct {
	// Classification is the verdict, in the classify --json form.
	result
	// Evidence is what the verdict rests on: "chain", "header", "code",
	// "text", "status" or "none".
	Evidence string `json:"evidence"`
	// Policy is the preset the decision was made under.
	Policy string `json:"policy"`
	// Decision is what a fresh Session decides for the failure.
	Decision explainedDecision `json:"decision"`
	// Events are the decision's lifecycle events, as the host would stream
	// them.
	Events []json.RawMessage `json:"events"`
	// Notes are the advisory notes of the next request.
	Notes []explainedNote `json:"notes"`
	// Words are, for a verdict of the word model (evidence "words"), the
	// words of the text that pushed hardest towards its class, strongest
	// first.
	Words []explainedWord `json:"words,omitempty"`
}

// explainedWord is one word the word model weighed, and its weight
// towards the class it gave.
type explainedWord struct {
	Word   string  `json:"word"`
	Weight float64 `json:"weight"`
}

// explainedDecision is the JSON form of an erradvisor.Decision.
type explainedDecision struct {
	Action  string `json:"action"`
	Cause   string `json:"cause"`
	DelayMS int64  `json:"delay_ms"`
	Attempt int    `json:"attempt"`
	Max     int    `json:"max"` // 0 = no limit
	Explain string `json:"explain"`
	Text    string `json:"text,omitempty"` // the hidden message of Continue and Nudge
}

// explainedNote is the JSON form of an erradvisor.Note.
type explainedNote struct {
	Kind string `json:"kind"`
	Text string `json:"text"`
}

// explainOpts are the flags of explain.
type explainOpts struct {
	classifyOpts
	policy, model string
}

// explainCmd runs `erradvisor explain [flags] [TEXT...]`: it classifies one
// failure like classify, then shows what a session would do with it as the
// first failure of a user turn:
//
//   - the Decision of a fresh Session of the --policy preset, after
//     UserMessage, for an Outcome with stop reason "error" and the failure
//     (status, code, text, provider, model): action, cause, delay, attempt
//     of max, Explain, and its events as JSON lines;
//   - the notes the same Session returns for the next request, to the same
//     provider and model, when the transcript is the one failed assistant
//     entry. The notes use the Decision's verdict: the failure is
//     classified once. When the decision is a Retry, the next request is
//     that retry, which carries no note about the failure it retries.
func explainCmd(args []string, stdin io.Reader, stdinIsTerminal bool, stdout, stderr io.Writer) error {
	var o explainOpts
	fs := newFlagSet("explain")
	o.bind(fs)
	fs.StringVar(&o.model, "model", "", "")
	fs.StringVar(&o.policy, "policy", "conservative", "")
	text, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := checkStatus(o.status); err != nil {
		return usageErr("--status %d: %v", o.status, err)
	}
	p, err := policyByName(o.policy)
	if err != nil {
		return err
	}
	var msg string
	if len(text) > 0 {
		msg = strings.Join(text, " ")
	} else if !stdinIsTerminal {
		b, err := io.ReadAll(io.LimitReader(stdin, maxMessage+1))
		if err != nil {
			return fmt.Errorf("reading standard input: %w", err)
		}
		if len(b) > maxMessage {
			return fmt.Errorf("standard input is larger than %d MiB", maxMessage>>20)
		}
		msg = strings.TrimSpace(string(b))
	}
	if msg == "" && o.status == 0 && o.code == "" {
		return usageErr("explain: give the error TEXT (or pipe it on standard input), or set --status or --code")
	}
	c, err := loadClassifier(o.rules)
	if err != nil {
		return err
	}
	ex := explain(c, p, strings.ToLower(o.policy), o.provider, o.model, o.status, o.code, msg)
	if o.json {
		b, err := json.Marshal(ex)
		if err != nil {
			return err
		}
		_, err = stdout.Write(append(b, '\n'))
		return err
	}
	_, err = io.WriteString(stdout, ex.human(o.provider, o.model))
	return err
}

// explain builds the explanation of one failure observed now().
func explain(c *erradvisor.Classifier, p erradvisor.Policy, policyName, provider, model string, status int, code, msg string) explanation {
	at := now()
	cl := c.Classify(erradvisor.Failure{Provider: provider, Model: model, Status: status, Code: code, Message: msg, At: at})

	s := erradvisor.NewSession(p, erradvisor.WithClassifier(c))
	s.UserMessage(at)
	d := s.Decide(erradvisor.Outcome{
		Stop: erradvisor.StopError, Classification: cl,
		Failure:  erradvisor.Failure{Provider: provider, Model: model, Status: status, Code: code, Message: msg, At: at},
		Provider: provider, Model: model, CurrentModel: model, After: erradvisor.AfterUser,
	}, at)

	transcript := []erradvisor.Entry{{
		Kind: erradvisor.EntryAssistant, StopReason: erradvisor.StopError, ErrorMessage: msg,
		Provider: provider, Model: model, Time: at,
	}}
	notes := s.Notes(at, erradvisor.Target{Provider: provider, Model: model}, erradvisor.NewestFirst(transcript))

	ex := explanation{
		result:   toResult(cl),
		Evidence: cl.Evidence.String(),
		Policy:   policyName,
		Decision: explainedDecision{
			Action: d.Action.String(), Cause: d.Cause.String(), DelayMS: d.Delay.Milliseconds(),
			Attempt: d.Attempt, Max: d.Max, Explain: redact(d.Explain()), Text: redact(d.Text),
		},
		Events: []json.RawMessage{},
		Notes:  []explainedNote{},
	}
	for _, e := range d.Events() {
		ex.Events = append(ex.Events, json.RawMessage(eventJSON(e)))
	}
	for _, n := range notes {
		ex.Notes = append(ex.Notes, explainedNote{Kind: n.Kind.String(), Text: redact(n.Text)})
	}
	if cl.Evidence == erradvisor.EvidenceWords {
		for _, w := range wordmodel.Default().Explain(status, msg, wordmodel.Class(cl.Class), 5) {
			ex.Words = append(ex.Words, explainedWord{Word: redact(w.Word), Weight: math.Round(w.Weight*100) / 100})
		}
	}
	return ex
}

// human renders ex for a terminal.
func (ex explanation) human(provider, model string) string {
	var b strings.Builder
	field := func(name, value string) { fmt.Fprintf(&b, "%-12s%s\n", name, value) }
	field("class", ex.Class)
	field("reason", dash(ex.Reason))
	field("rule", dash(ex.Rule))
	field("evidence", ex.Evidence)
	if len(ex.Words) > 0 {
		var ws []string
		for _, w := range ex.Words {
			ws = append(ws, fmt.Sprintf("%q %+.2f", w.Word, w.Weight))
		}
		field("words", strings.Join(ws, ", "))
	}
	if ex.RetryAfterMS > 0 {
		field("retry after", (time.Duration(ex.RetryAfterMS) * time.Millisecond).String())
	} else {
		field("retry after", "-")
	}
	field("reset at", dash(ex.ResetAt))
	b.WriteString("\n")
	field("policy", ex.Policy+" (a fresh Session; this is the first failure of the turn)")
	d := ex.Decision
	field("decision", d.Action)
	field("cause", d.Cause)
	if d.DelayMS > 0 {
		field("delay", (time.Duration(d.DelayMS) * time.Millisecond).String())
	}
	if d.Attempt > 0 || d.Max > 0 {
		field("attempt", fmt.Sprintf("%d of %s", d.Attempt, maxString(d.Max)))
	}
	field("why", d.Explain)
	if d.Text != "" {
		field("send", fmt.Sprintf("%q (as a hidden user message)", d.Text))
	}
	if len(ex.Events) == 0 {
		field("events", "none")
	}
	for _, e := range ex.Events {
		field("event", string(e))
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "notes on the next request to %s, the transcript being this one failed turn", providerModel(provider, model))
	switch d.Action {
	case "retry":
		b.WriteString(" (the automatic retry: no note about the failure it retries)")
	case "compact":
		b.WriteString(" (not compacted)")
	}
	b.WriteString(":\n")
	if len(ex.Notes) == 0 {
		b.WriteString("  none\n")
	}
	for _, n := range ex.Notes {
		fmt.Fprintf(&b, "  %s\n", n.Text)
	}
	return b.String()
}
