package wordmodel

import (
	"math"
	"slices"
)

// A Doc is one labelled text to train on.
type Doc struct {
	Status int
	Text   string
	Class  Class
	// Group names where the text came from (a repository, a site). A
	// feature seen in texts of only one group is not learnt: it is more
	// likely that source's identifier than a word of meaning.
	Group string
}

// Options are the training settings. The zero value is not useful; start
// from DefaultOptions.
type Options struct {
	Epochs    int     // passes over the documents
	Rate      float64 // initial learning rate
	Decay     float64 // the rate at pass e is Rate/(1+Decay*e)
	L2        float64 // weight decay per update
	MinGroups int     // least number of groups a feature must occur in
}

// DefaultOptions returns the settings the generated model is trained with.
func DefaultOptions() Options {
	return Options{Epochs: 30, Rate: 0.2, Decay: 0.2, L2: 1e-2, MinGroups: 2}
}

// Train fits a model to docs, in the order given, deterministically: the
// same documents in the same order give the same weights on every machine.
func Train(docs []Doc, o Options) *Weights {
	feats := make([][]uint32, len(docs))
	groups := map[uint32]map[string]bool{}
	for i, d := range docs {
		f := AppendFeatures(nil, d.Status, d.Text)
		slices.Sort(f)
		f = slices.Compact(f)
		feats[i] = f
		for _, h := range f {
			g := groups[h]
			if g == nil {
				g = map[string]bool{}
				groups[h] = g
			}
			g[d.Group] = true
		}
	}
	var keys []uint32
	for h, g := range groups {
		if len(g) >= o.MinGroups {
			keys = append(keys, h)
		}
	}
	slices.Sort(keys)
	index := make(map[uint32]int32, len(keys))
	for i, h := range keys {
		index[h] = int32(i)
	}
	rows := make([][]int32, len(docs))
	for i, f := range feats {
		for _, h := range f {
			if j, ok := index[h]; ok {
				rows[i] = append(rows[i], j)
			}
		}
	}

	const nc = int(NumClasses)
	w := make([]float64, len(keys)*nc)
	var bias [NumClasses]float64
	for e := 0; e < o.Epochs; e++ {
		rate := o.Rate / (1 + o.Decay*float64(e))
		for i, d := range docs {
			z := bias
			for _, j := range rows[i] {
				for c := 0; c < nc; c++ {
					z[c] += w[int(j)*nc+c]
				}
			}
			p := softmax(z)
			for c := 0; c < nc; c++ {
				g := p[c]
				if Class(c) == d.Class {
					g--
				}
				bias[c] -= float64(rate * g)
				for _, j := range rows[i] {
					k := int(j)*nc + c
					w[k] -= float64(rate * (g + float64(o.L2*w[k])))
				}
			}
		}
	}
	return quantise(keys, w, bias)
}

// quantise turns float weights into the int8 form, dropping features whose
// weights all round to zero.
func quantise(keys []uint32, w []float64, bias [NumClasses]float64) *Weights {
	const nc = int(NumClasses)
	var top float64
	for _, v := range w {
		top = max(top, math.Abs(v))
	}
	scale := 16.0
	if top > 0 {
		scale = math.Floor(127 / top)
		scale = max(scale, 1)
	}
	out := &Weights{Scale: scale}
	for c := range bias {
		out.Bias[c] = int32(math.Round(float64(bias[c] * scale)))
	}
	for i, h := range keys {
		var row [NumClasses]int8
		zero := true
		for c := 0; c < nc; c++ {
			q := math.Round(float64(w[i*nc+c] * scale))
			row[c] = int8(max(-127, min(127, q)))
			zero = zero && row[c] == 0
		}
		if zero {
			continue
		}
		out.Keys = append(out.Keys, h)
		out.W = append(out.W, row[:]...)
	}
	return out
}
