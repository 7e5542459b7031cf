package erradvisor

import "github.com/erradvisor/erradvisor/internal/wordmodel"

// The word model is the last resort of Classify: when no rule reads the
// text and no status decides, a linear model over the text's words (stems,
// adjacent pairs, Chinese, Japanese and Korean characters) gives a class if
// it is confident. It is trained from the labelled texts of testdata by
// `go run ./internal/tools/wordmodel` and generated into Go data, so it is
// deterministic and reproducible; a test checks the data is current.
//
// It gives a class only when that class is at least 90% likely and the
// classes that would make the verdict a costly mistake (for Transient:
// Permanent, Quota and Billing; for a class that stops: Overflow) are
// together at most 10% likely. It never gives Overflow or Canceled:
// compacting a conversation or treating a failure as the caller's own
// cancel rests on rules only. Its verdicts carry EvidenceWords, the weakest
// evidence, a rule id "words.<class>" and the class's most general reason,
// so a host that wants only rule verdicts can treat EvidenceWords as
// Unknown. It applies to every Classifier, whatever rule layers it was
// built from. The explain command shows the words that weighed most.

// wordReasons is the reason a word-model verdict gives for each class it
// may give: the class's most general one.
var wordReasons = [wordmodel.NumClasses]Reason{
	wordmodel.Transient: ReasonServer,
	wordmodel.Quota:     ReasonQuota,
	wordmodel.Billing:   ReasonCredits,
	wordmodel.Permanent: ReasonInvalidRequest,
}

// wordRules are the rule ids of word-model verdicts; a class without one is
// never given.
var wordRules = [wordmodel.NumClasses]string{
	wordmodel.Transient: "words.transient",
	wordmodel.Quota:     "words.quota",
	wordmodel.Billing:   "words.billing",
	wordmodel.Permanent: "words.permanent",
}

// guessFromWords returns the word model's verdict on a text no rule read,
// or the zero Classification when the model abstains. noTransient (the
// server said x-should-retry: false) forbids a Transient verdict.
func guessFromWords(status int, msg string, noTransient bool) Classification {
	g := wordmodel.Default().Guess(status, msg)
	if g.Class == wordmodel.Unknown || wordRules[g.Class] == "" || noTransient && g.Class == wordmodel.Transient {
		return Classification{}
	}
	return Classification{Class: Class(g.Class), Reason: wordReasons[g.Class], Rule: wordRules[g.Class], Evidence: EvidenceWords}
}
