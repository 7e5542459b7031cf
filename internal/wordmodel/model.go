package wordmodel

import (
	"math"
	"slices"
)

// Class is a class of failure, in the order of the root package's Class.
type Class uint8

// The classes, in the order of erradvisor.Class.
const (
	Unknown Class = iota
	Transient
	Overflow
	Quota
	Billing
	Permanent
	Canceled

	NumClasses
)

var classNames = [NumClasses]string{"unknown", "transient", "overflow", "quota", "billing", "permanent", "canceled"}

// String returns the class's name as the root package spells it.
func (c Class) String() string {
	if c < NumClasses {
		return classNames[c]
	}
	return "class(?)"
}

// ParseClass returns the class named s, or false.
func ParseClass(s string) (Class, bool) {
	for i, n := range classNames {
		if n == s {
			return Class(i), true
		}
	}
	return 0, false
}

// Weights is a trained model: for each feature (a hash, kept sorted in
// Keys) one weight per class, quantised to int8 and read as W/Scale.
// A Weights is immutable once built and safe for concurrent use.
type Weights struct {
	// Keys are the features the model knows, in increasing order.
	Keys []uint32
	// W holds NumClasses weights per key: W[i*NumClasses+c] is key i's
	// weight for class c.
	W []int8
	// Bias is each class's weight before any feature.
	Bias [NumClasses]int32
	// Scale divides a summed score to give a logit.
	Scale float64
}

// Default returns the model generated from the repository's fixtures.
func Default() *Weights { return &generated }

// index returns the position of feature f in w.Keys, or -1.
func (w *Weights) index(f uint32) int {
	i, ok := slices.BinarySearch(w.Keys, f)
	if !ok {
		return -1
	}
	return i
}

// seen remembers which known features a text has already counted, so that
// each counts once, as in training: a small open-addressing set that lives
// on the stack. Past seenMax distinct features it stops remembering, and a
// repeat counts again; no text the model was trained on comes near that.
type seen struct {
	slot [1024]int32 // feature index + 1; 0 is empty
	n    int
}

const seenMax = 768

func (s *seen) add(i int32) bool {
	if s.n >= seenMax {
		return true
	}
	h := uint32(i) * 2654435761 >> 22
	for {
		switch s.slot[h] {
		case 0:
			s.slot[h] = i + 1
			s.n++
			return true
		case i + 1:
			return false
		}
		h = (h + 1) & (uint32(len(s.slot)) - 1)
	}
}

// Logits returns each class's logit for a failure with the given HTTP
// status (0 if none) and text. It does not allocate.
func (w *Weights) Logits(status int, text string) [NumClasses]float64 {
	sum := w.Bias
	var once seen
	sc := newScanner(status, text)
	for {
		f, ok := sc.next()
		if !ok {
			break
		}
		i := w.index(f)
		if i < 0 || !once.add(int32(i)) {
			continue
		}
		row := w.W[i*int(NumClasses) : (i+1)*int(NumClasses)]
		for c, v := range row {
			sum[c] += int32(v)
		}
	}
	var out [NumClasses]float64
	for c, v := range sum {
		out[c] = float64(v) / w.Scale
	}
	return out
}

// Probs returns the probability the model gives each class.
func (w *Weights) Probs(status int, text string) [NumClasses]float64 {
	return softmax(w.Logits(status, text))
}

// softmax turns logits into probabilities.
func softmax(z [NumClasses]float64) [NumClasses]float64 {
	m := z[0]
	for _, v := range z[1:] {
		m = max(m, v)
	}
	var p [NumClasses]float64
	var t float64
	for c, v := range z {
		p[c] = exp(v - m)
		t += p[c]
	}
	for c := range p {
		p[c] /= t
	}
	return p
}

// exp is e**x, written out so that training gives the same weights on
// every machine (math.Exp may use fused multiply-add where the processor
// has it). Each product is converted explicitly, which the language
// defines as a rounding, so no compiler fuses it either.
func exp(x float64) float64 {
	switch {
	case x > 700:
		return math.Inf(1)
	case x < -700:
		return 0
	}
	k := math.Floor(float64(x/math.Ln2) + 0.5)
	r := x - float64(k*math.Ln2)
	// Taylor series of e**r for |r| <= ln2/2: 14 terms are exact to the
	// last bit that matters here.
	term, s := 1.0, 1.0
	for n := 1; n <= 14; n++ {
		term = float64(term*r) / float64(n)
		s += term
	}
	return math.Ldexp(s, int(k))
}

// A Guess is the model's verdict on one text.
type Guess struct {
	// Class is the class given, Unknown when the model abstains.
	Class Class
	// P is the probability of the class the model found most likely
	// (whether or not it abstained), Best that class.
	P    float64
	Best Class
}

// MinP is the least probability at which the model gives a class; below
// it the model abstains. The value comes from cross-validation grouped by
// source (see internal/tools/wordmodel): at it, the classes given to texts
// no rule reads are right far more often than not, and costly mistakes are
// rare.
const MinP = 0.9

// MaxCostly is the most probability the model may put on the classes that
// would make its verdict a costly mistake (the classes of failures that a
// retry cannot fix when it says transient, an overflow when it says a
// class that stops) and still give it.
const MaxCostly = 0.1

// Guess returns the model's verdict on a failure: the most likely class
// when it is at least MinP likely and the classes that would make it a
// costly mistake are together at most MaxCostly likely, else Unknown. The
// model never gives Overflow or Canceled: compacting a conversation, or
// reading a failure as the caller's own cancel, rests on rules only (in
// cross-validation its overflow verdicts fell on local servers' warnings).
func (w *Weights) Guess(status int, text string) Guess {
	return w.GuessAt(status, text, MinP, MaxCostly)
}

// GuessAt is Guess with other thresholds, for measuring them.
func (w *Weights) GuessAt(status int, text string, minP, maxCostly float64) Guess {
	p := w.Probs(status, text)
	best := Unknown
	for c := range p {
		if p[c] > p[best] {
			best = Class(c)
		}
	}
	g := Guess{Best: best, P: p[best]}
	if best == Unknown || best == Canceled || best == Overflow || p[best] < minP {
		return g
	}
	var costly float64
	switch best {
	case Transient:
		costly = p[Permanent] + p[Quota] + p[Billing]
	case Permanent, Quota, Billing:
		costly = p[Overflow]
	}
	if costly > maxCostly {
		return g
	}
	g.Class = best
	return g
}

// Contribution is what one feature of a text adds to a class's logit.
type Contribution struct {
	Word   string  // the text the feature was read from
	Weight float64 // its weight towards the class, in logits
}

// Explain returns the features of a text that pushed hardest towards class
// c, strongest first, at most n of them. It allocates.
func (w *Weights) Explain(status int, text string, c Class, n int) []Contribution {
	var out []Contribution
	var once seen
	for _, wd := range Words(status, text) {
		i := w.index(wd.Feature)
		if i < 0 || !once.add(int32(i)) {
			continue
		}
		v := float64(w.W[i*int(NumClasses)+int(c)]) / w.Scale
		if v > 0 {
			out = append(out, Contribution{Word: wd.Text, Weight: v})
		}
	}
	slices.SortStableFunc(out, func(a, b Contribution) int {
		switch {
		case a.Weight > b.Weight:
			return -1
		case a.Weight < b.Weight:
			return 1
		}
		return 0
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}
