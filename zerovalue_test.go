package erradvisor

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// callAll calls every exported method of v with zero arguments, and fails
// the test if one panics. With pointerOnly, it calls only the methods
// declared on the pointer receiver (a value method on a nil pointer panics
// in the language itself, before any of our code runs).
func callAll(t *testing.T, name string, v reflect.Value, pointerOnly bool) int {
	t.Helper()
	n := 0
	typ := v.Type()
	for i := range typ.NumMethod() {
		m := typ.Method(i)
		if pointerOnly && typ.Kind() == reflect.Pointer {
			if _, ok := typ.Elem().MethodByName(m.Name); ok {
				continue // a value method
			}
		}
		args := make([]reflect.Value, m.Type.NumIn()-1)
		for j := range args {
			args[j] = reflect.Zero(m.Type.In(j + 1))
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s.%s panicked: %v", name, m.Name, r)
				}
			}()
			v.Method(i).Call(args)
			n++
		}()
	}
	return n
}

// TestZeroValuesAndNils calls every exported method of the package's
// classifier and rule types on their zero values and on nil pointers.
func TestZeroValuesAndNils(t *testing.T) {
	calls := 0
	calls += callAll(t, "RuleError{}", reflect.ValueOf(&RuleError{}), false)
	calls += callAll(t, "(*RuleError)(nil)", reflect.ValueOf((*RuleError)(nil)), true)
	calls += callAll(t, "RuleSet{}", reflect.ValueOf(&RuleSet{}), false)
	calls += callAll(t, "(*RuleSet)(nil)", reflect.ValueOf((*RuleSet)(nil)), true)
	calls += callAll(t, "Classifier{}", reflect.ValueOf(&Classifier{}), false)
	calls += callAll(t, "(*Classifier)(nil)", reflect.ValueOf((*Classifier)(nil)), true)
	calls += callAll(t, "Classification{}", reflect.ValueOf(Classification{}), false)
	calls += callAll(t, "RuleInfo{}", reflect.ValueOf(RuleInfo{}), false)
	if calls < 10 {
		t.Errorf("only %d methods called", calls)
	}

	// What they do.
	type got struct {
		ZeroErr, NilErr  string
		NilUnwrap        error
		NilName          string
		NilRules         []RuleInfo
		ZeroRules        []RuleInfo
		ZeroClass        Classification
		NilClass         Classification
		NilCanceled      Classification
		ZeroRuleErrWraps string
	}
	var nilC *Classifier
	f := Failure{Status: 429, Message: "Too many requests"}
	g := got{
		ZeroErr:          (&RuleError{}).Error(),
		NilErr:           (*RuleError)(nil).Error(),
		NilUnwrap:        (*RuleError)(nil).Unwrap(),
		NilName:          (*RuleSet)(nil).Name(),
		NilRules:         (*RuleSet)(nil).Rules(),
		ZeroRules:        (&RuleSet{}).Rules(),
		ZeroClass:        (&Classifier{}).Classify(f),
		NilClass:         nilC.Classify(f),
		NilCanceled:      nilC.Classify(Failure{Err: context.Canceled}),
		ZeroRuleErrWraps: (&RuleError{File: "x.yaml", Line: 3, Err: fmt.Errorf("bad")}).Error(),
	}
	want := got{
		ZeroErr:          "rules: invalid rule file",
		NilErr:           "<nil>",
		NilName:          "",
		NilRules:         nil,
		ZeroRules:        []RuleInfo{},
		ZeroClass:        Classify(f),
		NilClass:         Classify(f),
		NilCanceled:      Classification{Class: Canceled, Reason: ReasonAborted, Rule: "go.context_canceled", Evidence: EvidenceChain},
		ZeroRuleErrWraps: "x.yaml:3: bad",
	}
	if diff := cmp.Diff(want, g, cmp.Comparer(func(a, b error) bool { return a == b })); diff != "" {
		t.Errorf("zero values (-want +got):\n%s", diff)
	}
	if want.ZeroClass.Class != Transient {
		t.Errorf("the defaults did not classify a 429: %+v", want.ZeroClass)
	}
}

func TestClassifyErrorOnZeroClassifier(t *testing.T) {
	var c Classifier
	got := c.Classify(Failure{Err: fmt.Errorf("x: %w", nilDeref)})
	if got != (Classification{}) {
		t.Errorf("got %+v", got)
	}
}
