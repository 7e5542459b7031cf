package erradvisor

import (
	"github.com/google/go-cmp/cmp/cmpopts"
)

// ignoreEvidence leaves Classification.Evidence out of comparisons of
// tables written before it existed; TestEvidence checks it.
var ignoreEvidence = cmpopts.IgnoreFields(Classification{}, "Evidence")
