package match

import (
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestTraditional(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"余额不足", "餘額不足"},
		{"请稍后再试", "請稍後再試"},
		{"账户已欠费", "帳戶已欠費"},
		{"上下文长度超过限制", "上下文長度超過限制"},
		{"连接超时", "連接超時"},
		{"无效的令牌", "無效的令牌"},
		{"rate limit", "rate limit"},         // no Chinese
		{"模型不存在", "模型不存在"},                   // written alike in both
		{"api 密钥 invalid", "api 密鑰 invalid"}, // mixed scripts
		{"", ""},
	} {
		if got := Traditional(tc.in); got != tc.want {
			t.Errorf("Traditional(%q): %s", tc.in, cmp.Diff(tc.want, got))
		}
	}
}

// TestTraditionalTable checks the table: every pair maps a character to a
// different one, and no traditional form is itself mapped (so the mapping
// is idempotent).
func TestTraditionalTable(t *testing.T) {
	for s, tr := range hant {
		if s == tr {
			t.Errorf("%c maps to itself", s)
		}
		if _, ok := hant[tr]; ok {
			t.Errorf("%c maps to %c, which is mapped again", s, tr)
		}
		if got := Simplified(tr); got != s {
			t.Errorf("Simplified(%c) = %c, want %c (two characters share a traditional form)", tr, got, s)
		}
	}
	if got := Simplified('a'); got != 'a' {
		t.Errorf("Simplified('a') = %c", got)
	}
}

func FuzzTraditional(f *testing.F) {
	for _, s := range []string{"余额不足", "请稍后再试", "rate limit", "\xff余", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Traditional(s)
		if utf8.ValidString(s) {
			if !utf8.ValidString(got) {
				t.Fatalf("Traditional(%q) = %q: invalid UTF-8", s, got)
			}
			if utf8.RuneCountInString(got) != utf8.RuneCountInString(s) {
				t.Fatalf("Traditional(%q) = %q: rune count changed", s, got)
			}
		}
		if Traditional(got) != got {
			t.Fatalf("Traditional not idempotent on %q", s)
		}
	})
}
