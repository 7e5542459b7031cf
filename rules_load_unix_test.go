//go:build unix

package erradvisor

import (
	"path/filepath"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLoadRuleFileFIFO: a FIFO with no writer is an error at once (opening
// it for reading would block).
func TestLoadRuleFileFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	_, err := loadQuickly(t, path)
	if diff := cmp.Diff(ruleErrorShape{File: path, Mentions: true}, shapeOf(t, err, "not a regular file")); diff != "" {
		t.Errorf("%v (-want +got):\n%s", err, diff)
	}
}
