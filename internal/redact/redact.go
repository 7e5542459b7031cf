// Package redact finds secrets in text and replaces them with a marker. It
// is the one redactor of the module: every output that may carry outside
// text goes through it.
//
// It reads the text as a reader would after decoding it: URL escapes
// (%3D), JSON and string escapes (\u0070, \/, \", \n) and invisible
// characters (zero-width, format and control characters) do not hide a
// secret, nor does a line break inside a key. Detection is linear in the
// length of the text.
package redact

import (
	"slices"
)

// Marker replaces each secret.
const Marker = "[redacted]"

// String returns s with every secret replaced by Marker. Non-secret labels
// around a secret (a parameter's name, "Bearer ", a URL's user name, the
// BEGIN line of a PEM block) stay.
//
// The result is settled: String(String(s)) == String(s). A marker can
// change how the text around it reads (a value grows from one character to
// ten and now looks generated), so when a pass found secrets the result is
// read again, and redacted again, until a pass changes nothing: a text
// with secrets is read at least twice. Text that has not settled after
// four further passes, which only constructed input reaches, is replaced
// whole by Marker.
func String(s string) string {
	spans := Find(s)
	if len(spans) == 0 {
		return s
	}
	return settle(string(appendSpans(make([]byte, 0, len(s)), s, spans)))
}

// Append appends String(s) to dst.
func Append(dst []byte, s string) []byte {
	spans := Find(s)
	if len(spans) == 0 {
		return append(dst, s...)
	}
	n := len(dst)
	dst = appendSpans(dst, s, spans)
	out := string(dst[n:])
	if again := settle(out); again != out {
		dst = append(dst[:n], again...)
	}
	return dst
}

// maxPasses bounds the passes of settle. Real text settles in one.
const maxPasses = 4

// settle redacts the output of a pass until a pass changes nothing.
func settle(out string) string {
	for range maxPasses {
		spans := Find(out)
		if !changes(out, spans) {
			return out
		}
		out = string(appendSpans(make([]byte, 0, len(out)), out, spans))
	}
	if spans := Find(out); !changes(out, spans) {
		return out
	}
	return Marker
}

// changes reports whether replacing spans of s by Marker changes s: whether
// some span is not exactly a marker already there.
func changes(s string, spans [][2]int) bool {
	for _, sp := range spans {
		if s[sp[0]:sp[1]] != Marker {
			return true
		}
	}
	return false
}

func appendSpans(dst []byte, s string, spans [][2]int) []byte {
	last := 0
	for _, sp := range spans {
		dst = append(dst, s[last:sp[0]]...)
		dst = append(dst, Marker...)
		last = sp[1]
	}
	return append(dst, s[last:]...)
}

// Find returns the byte ranges [start, end) of s that hold secrets, in
// order, disjoint and not touching.
func Find(s string) [][2]int {
	v := newView(s)
	found, keep := scan(v.text)
	if len(found) == 0 {
		return nil
	}
	slices.SortFunc(found, func(a, b span) int { return a.start - b.start })
	merged := found[:1]
	for _, sp := range found[1:] {
		if last := &merged[len(merged)-1]; sp.start <= last.end {
			last.end = max(last.end, sp.end)
			continue
		}
		merged = append(merged, sp)
	}
	out := make([][2]int, 0, len(merged))
	for _, sp := range clip(merged, keep) {
		a, b := v.origin(sp.start, sp.end)
		if n := len(out); n > 0 && a <= out[n-1][1] {
			out[n-1][1] = max(out[n-1][1], b)
			continue
		}
		out = append(out, [2]int{a, b})
	}
	return out
}

// clip removes the ranges in keep from spans; both are sorted and
// disjoint. A span that starts at or before a kept END line's BEGIN line
// covers the whole block and keeps nothing.
func clip(spans []span, keep []keepSpan) []span {
	if len(keep) == 0 {
		return spans
	}
	out := make([]span, 0, len(spans)+len(keep))
	k := 0
	for _, sp := range spans {
		for k < len(keep) && keep[k].end <= sp.start {
			k++
		}
		for j := k; j < len(keep) && keep[j].start < sp.end; j++ {
			if sp.start <= keep[j].begin {
				continue
			}
			if keep[j].start > sp.start {
				out = append(out, span{sp.start, keep[j].start})
			}
			sp.start = max(sp.start, keep[j].end)
		}
		if sp.start < sp.end {
			out = append(out, sp)
		}
	}
	return out
}
