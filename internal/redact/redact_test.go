package redact

import (
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
