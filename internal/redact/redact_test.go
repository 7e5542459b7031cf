package redact

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestView(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "key=value", "key=value"},
		{"url escapes", "a%3Db%2Fc%zz%4", "a=b/c%zz%4"},
		{"json escapes", `\u0070\/\"\\\n\x3d\q`, "p/\"\\\n=\\q"},
		{"invisible dropped", "a\u200bb\ufe0fc\u2800d\x00e\u115ff\U000E0041", "abcdef"},
		{"escaped invisible dropped", `a\u200bb`, "ab"},
		{"tab and line breaks kept", "a\tb\r\nc", "a\tb\r\nc"},
		{"non-ASCII kept", "é€", "é€"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, newView(tt.in).text); diff != "" {
				t.Errorf("view(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestViewOrigin(t *testing.T) {
	v := newView(`k%3D\u0061b`)
	// k = a b
	got := [][2]int{}
	for _, sp := range [][2]int{{0, 1}, {1, 2}, {2, 3}, {3, 4}, {1, 4}} {
		a, b := v.origin(sp[0], sp[1])
		got = append(got, [2]int{a, b})
	}
	want := [][2]int{{0, 1}, {1, 4}, {4, 10}, {10, 11}, {1, 11}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("origins (-want +got):\n%s", diff)
	}
}

func TestClassifyName(t *testing.T) {
	tests := map[string]nameKind{
		"key": weakSecret, "token": weakSecret, "session": weakSecret, "sig": weakSecret, "pass": weakSecret,
		"api_key": strongSecret, "x-api-key": strongSecret, "X-Amz-Signature": strongSecret,
		"aws_secret_access_key": strongSecret, "SecretAccessKey": strongSecret, "APIKey": strongSecret,
		"accessToken": strongSecret, "sessionId": strongSecret, "Ocp-Apim-Subscription-Key": strongSecret,
		"password": strongSecret, "PASSWORD": strongSecret, "passwd": strongSecret, "pwd": strongSecret,
		"Set-Cookie": strongSecret, "Authorization": strongSecret, "client_secret": strongSecret,
		"accesstoken": strongSecret, "AccountKey": strongSecret, "key2": weakSecret,
		"max_tokens": notSecret, "token_type": notSecret, "promptTokenCount": notSecret, "monkey": notSecret,
		"keyboard": notSecret, "passage": notSecret, "request_id": notSecret, "id": notSecret, "": notSecret,
		"tokens": notSecret, "ID": notSecret, "expires_in": notSecret,
		"Api_keY": strongSecret, // a capital that ends the name starts no word
	}
	for name, want := range tests {
		if got := classifyName(name); got != want {
			t.Errorf("classifyName(%q) = %d, want %d", name, got, want)
		}
	}
}

func TestLooksRandom(t *testing.T) {
	tests := map[string]bool{
		"abc123": true, "dXNlcjpw": true, "a/b+C=de": true, "a/b+c=de": false, "YOUR_KEY": false, "ABCDEF": false, "Please": false,
		"expired": false, "authentication": false, "x-y": false, "": false,
	}
	for s, want := range tests {
		if got := looksRandom(s); got != want {
			t.Errorf("looksRandom(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestFind(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want [][2]int
	}{
		{"none", "nothing here", nil},
		{"key", "a sk-abcdefghijkl b", [][2]int{{2, 17}}},
		{"overlapping secrets are one span", "https://u:p@h/?key=v", [][2]int{{10, 11}, {19, 20}}},
		{"touching secrets are one span", "Bearer eyJa.eyJb.c", [][2]int{{7, 18}}},
		{"escaped key spans its escapes", `"\u0073k-abcdefghijkl"`, [][2]int{{1, 21}}},
		{"pem END line kept", "-----BEGIN PRIVATE KEY-----=-----END x", [][2]int{{27, 28}}},
		// A quoted value that holds the whole block hides its END line too,
		// so that redacting the result again changes nothing.
		{"pem block inside a quoted value", `key:"-----BEGIN PRIVATE KEY----------END`, [][2]int{{5, 40}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Find(tt.in)); diff != "" {
				t.Errorf("Find(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestStringKeepsLabels(t *testing.T) {
	tests := map[string]string{
		"Authorization: Bearer abcdef123456":     "Authorization: Bearer [redacted]",
		"Cookie: a=1; b=2":                       "Cookie: [redacted]",
		"https://bob:pw123@h":                    "https://bob:[redacted]@h",
		"key=[redacted]":                         "key=[redacted]",
		"api_key%3Dabc123&x=1":                   "api_key%3D[redacted]&x=1",
		"token: expired, password: required":     "token: expired, password: required",
		"ok":                                     "ok",
		"X-Api-Key: short":                       "X-Api-Key: [redacted]",
		"invalid api key: Zx81kq0Pm2":            "invalid api key: [redacted]",
		"max_tokens=5000 and 5000 tokens/minute": "max_tokens=5000 and 5000 tokens/minute",
	}
	for in, want := range tests {
		if got := String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestStringSettles covers texts whose first pass leaves something a second
// pass would redact: String reads its own output again until it settles,
// and Append gives the same text.
func TestStringSettles(t *testing.T) {
	tests := []struct{ in, want string }{
		// The inner value "0" becomes a marker, after which the outer
		// value is long enough to look generated.
		{"!keY:A0keY:0", "!keY:[redacted]"},
		// A PEM label holding a long secret.
		{"-----BEGIN KEY:" + strings.Repeat("0", 60) + " PRIVATE KEY-----0", "-----BEGIN KEY:[redacted] PRIVATE KEY-----[redacted]"},
		{Marker, Marker},
		{"key=" + Marker, "key=" + Marker},
	}
	for _, tt := range tests {
		got := String(tt.in)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("String(%q) (-want +got):\n%s", tt.in, diff)
		}
		if again := String(got); again != got {
			t.Errorf("String(String(%q)) = %q, want %q", tt.in, again, got)
		}
		if app := string(Append([]byte("> "), tt.in)); app != "> "+got {
			t.Errorf("Append(%q) = %q, want %q", tt.in, app, "> "+got)
		}
	}
}

// TestWrappedRunStopsAtNewKey: a key carried over a line break does not
// swallow the start of the next line when that line starts a vendor key of
// its own, which is then redacted whole.
func TestWrappedRunStopsAtNewKey(t *testing.T) {
	in := "ABIA00000000\nya29.Q1w2E3r4T5y6U7i8O9p0\r\nA1s2D3f4G5h6J7k8(0"
	got := String(in)
	for _, body := range []string{"Q1w2E3r4", "A1s2D3f4"} {
		if strings.Contains(got, body) {
			t.Errorf("String(%q) = %q leaks %q", in, got, body)
		}
	}
	// A wrapped key whose next line does not start a key stays one key.
	if got, want := String("sk-Q1w2E3r4T5y6\nU7i8O9p0A1s2 ok"), "[redacted] ok"; got != want {
		t.Errorf("wrapped key: got %q, want %q", got, want)
	}
}

// TestWrappedRunKeepsShortPrefixedTail: a wrapped line that starts with a
// key prefix but is too short to be a key of its own stays part of the key
// before it, and is redacted with it.
func TestWrappedRunKeepsShortPrefixedTail(t *testing.T) {
	for _, in := range []string{
		"sk-Q1w2E3r4T5y6U7i8\nsk-A1b2",
		"Bearer Q1w2E3r4T5y6U7i8O9\nsk-A1b2c3",
	} {
		got := String(in)
		for _, tail := range []string{"A1b2", "Q1w2"} {
			if strings.Contains(got, tail) {
				t.Errorf("String(%q) = %q leaks %q", in, got, tail)
			}
		}
	}
}
