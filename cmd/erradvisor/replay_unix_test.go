//go:build unix

package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReplayDevZeroReturns is the regression test for `replay /dev/zero`,
// which spun forever: a device is refused at once, and a FIFO that streams
// zeros without a newline fails within seconds.
func TestReplayDevZeroReturns(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	go func() { // the writer: zeros until the reader goes away
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer w.Close()
		io.Copy(w, endless(0))
	}()
	tests := []struct {
		path   string
		errHas string
	}{
		{"/dev/zero", "erradvisor: /dev/zero: is a device, not a session file\n"},
		{fifo, fifo + ":1: not a Pi session file: no session header line in the first 1024 KiB"},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.path), func(t *testing.T) {
			type result struct {
				code   int
				stderr string
			}
			done := make(chan result, 1)
			go func() {
				var stderr bytes.Buffer
				code := run([]string{"replay", tt.path}, noRead{t}, true, io.Discard, &stderr)
				done <- result{code, stderr.String()}
			}()
			select {
			case r := <-done:
				if r.code != 1 || !strings.Contains(r.stderr, tt.errHas) {
					t.Errorf("exit %d, stderr %q; want 1 and %q", r.code, r.stderr, tt.errHas)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("replay did not return within 30 s")
			}
		})
	}
}
