package redact

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// A plant is a secret as it is written (text) and the part of it that must
// never come out (body). The bodies are made up, with digits throughout,
// as generated keys have.
type plant struct {
	text, body string
}

const (
	b36 = "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8"
	b64 = "Zx9/Cv8+Bn7=Mq6Wr5Ty4Ui3Op2As1Df0Gh"
)

var plants = []plant{
	{"sk-proj-" + b36, b36},
	{"sk-ant-api03-" + b36, b36},
	{"sk-" + b36, b36},
	{"ghp_" + b36, b36},
	{"gho_" + b36, b36},
	{"github_pat_11AB" + b36, b36},
	{"glpat-" + b36[:20], b36[:20]},
	{"hf_" + b36, b36},
	{"sk_live_" + b36, b36},
	{"rk_live_" + b36, b36},
	{"xoxb-1234567890-" + b36, b36},
	{"xoxp-1234567890-" + b36, b36},
	{"AIza" + b36[:35], b36[:35]},
	{"ya29." + b36, b36},
	{"AKIAQ3R7T2Y8U4I6O1P5", "Q3R7T2Y8U4I6O1P5"},
	{"ASIAQ3R7T2Y8U4I6O1P5", "Q3R7T2Y8U4I6O1P5"},
	{"npm_" + b36, b36},
	{"gsk_" + b36, b36},
	{"xai-" + b36, b36},
	{"r8_" + b36, b36},
	{"eyJhbGciOiJIUzI1NiJ9.eyJ" + b36 + "." + b36[4:], b36[4:]},
	{"Bearer " + b64, b64},
	{"Basic " + b64, b64},
	{"Authorization: token " + b36, b36},
	{"Authorization: Bearer " + b64, b64},
	{"api_key=" + b36, b36},
	{"password=" + "p4/sS#w0Rd9/x8Y7z6" + b36[:10], "p4/sS#w0Rd9/x8Y7z6" + b36[:10]},
	{"&sig=" + b64, b64},
	{"X-Amz-Signature=" + b36, b36},
	{"client_secret=" + b36, b36},
	{"x-api-key: " + b36, b36},
	{"api-key: " + b36, b36},
	{"Ocp-Apim-Subscription-Key: " + b36, b36},
	{`{"api_key":"` + b36 + `"}`, b36},
	{`{"SecretAccessKey":"` + b64 + `"}`, b64},
	{"aws_secret_access_key = " + b64, b64},
	{"https://user:" + b36 + "@host.example/x", b36},
	{"https://hooks.slack.com/services/T0A1B2C3D/B4E5F6G7H/" + b36[:24], b36[:24]},
	{"Cookie: session=" + b36 + "; theme=dark", b36},
	{"Set-Cookie: sid=" + b36 + "; Path=/", b36},
	{"-----BEGIN RSA PRIVATE KEY-----\n" + b64 + "\n" + b36 + "\n-----END RSA PRIVATE KEY-----", b64},
}

// The ways a plant is written.
const (
	encPlain = iota
	encURLSome
	encURLAll
	encJSONSome
	encJSONString
	encLF
	encCRLF
	encInvisible
	numEncodings
)

// seps surround a plant; none of them occurs in a body.
const seps = " \n\t(),<>\""

// encode writes text in encoding enc; k, from the fuzzer, picks which
// characters are escaped and where a line break goes.
func encode(p plant, enc int, k int) string {
	text := p.text
	var b strings.Builder
	switch enc {
	case encURLSome, encURLAll:
		for i := 0; i < len(text); i++ {
			c := text[i]
			if enc == encURLAll || !isAlnum(c) || (k > 0 && i%(k%7+2) == 0) {
				fmt.Fprintf(&b, "%%%02X", c)
			} else {
				b.WriteByte(c)
			}
		}
		return b.String()
	case encJSONSome:
		for i := 0; i < len(text); i++ {
			c := text[i]
			switch {
			case c == '/':
				b.WriteString(`\/`)
			case c == '"':
				b.WriteString(`\"`)
			case c == '\n':
				b.WriteString(`\n`)
			case i%(k%5+2) == 0:
				fmt.Fprintf(&b, `\u%04x`, c)
			default:
				b.WriteByte(c)
			}
		}
		return b.String()
	case encJSONString:
		r := strings.NewReplacer(`"`, `\"`, `/`, `\/`, "\n", `\n`, `\`, `\\`)
		return `"` + r.Replace(text) + `"`
	case encLF, encCRLF, encInvisible:
		at := strings.Index(text, p.body)
		n := len(p.body)
		if n < 16 {
			return text
		}
		cut := at + 8 + k%(n-15)
		br := "\n"
		switch enc {
		case encCRLF:
			br = "\r\n"
		case encInvisible:
			br = "\u200b"
		}
		return text[:cut] + br + text[cut:]
	}
	return text
}

// decode undoes URL and JSON escapes and drops line breaks and invisible
// characters: what a reader of the text could put back together. It is
// written apart from the view on purpose.
func decode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		if c == '%' && i+2 < len(s) {
			if h, ok := hexAt(s, i+1, 2); ok {
				b.WriteByte(byte(h))
				i += 3
				continue
			}
		}
		if c == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case 'u':
				if h, ok := hexAt(s, i+2, 4); ok {
					b.WriteRune(h)
					i += 6
					continue
				}
			case '/', '"', '\\':
				b.WriteByte(s[i+1])
				i += 2
				continue
			case 'n', 'r':
				i += 2
				continue
			}
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		if r != '\n' && r != '\r' && !Ignorable(r) {
			b.WriteString(s[i : i+w])
		}
		i += w
	}
	return b.String()
}

// leaked returns a piece of body, at least 8 bytes long, that out shows
// once decoded and that the surrounding text does not supply itself.
func leaked(body, out string, around ...string) string {
	d := decode(out)
	for i := 0; i+8 <= len(body); i++ {
		w := body[i : i+8]
		if !strings.Contains(d, w) {
			continue
		}
		supplied := false
		for _, a := range around {
			if strings.Contains(a, w) || strings.Contains(decode(a), w) {
				supplied = true
			}
		}
		if !supplied {
			return w
		}
	}
	return ""
}

func FuzzPlantedSecret(f *testing.F) {
	f.Add("", "", uint8(0), uint8(0), uint8(0), uint8(0))
	f.Add("Error: 401 ", " is not valid", uint8(3), uint8(encURLSome), uint8(1), uint8(3))
	f.Add(`{"error":{"message":"`, `"}}`, uint8(33), uint8(encJSONString), uint8(9), uint8(1))
	f.Add("password: ", "\nnext line", uint8(36), uint8(encLF), uint8(0), uint8(5))
	f.Add("key=", "&x=1", uint8(25), uint8(encCRLF), uint8(2), uint8(9))
	f.Add("-----BEGIN PRIVATE KEY-----", "", uint8(14), uint8(encInvisible), uint8(3), uint8(0))
	f.Add("\\", "%", uint8(4), uint8(encJSONSome), uint8(4), uint8(2))
	f.Fuzz(func(t *testing.T, prefix, suffix string, which, enc, sep, k uint8) {
		p := plants[int(which)%len(plants)]
		e := int(enc) % numEncodings
		written := encode(p, e, int(k))
		s1, s2 := seps[int(sep)%len(seps)], seps[int(sep/16)%len(seps)]
		in := prefix + string(s1) + written + string(s2) + suffix
		out := String(in)
		if w := leaked(p.body, out, prefix, suffix); w != "" {
			t.Fatalf("plant %q written %q (encoding %d) leaks %q:\nin:  %q\nout: %q", p.text, written, e, w, in, out)
		}
	})
}

func FuzzString(f *testing.F) {
	for _, p := range plants {
		for e := 0; e < numEncodings; e++ {
			f.Add(encode(p, e, 3))
		}
	}
	f.Add("key=[redacted]x")
	f.Add("://keY=:0@")
	f.Add("https://a:b@c:d@e")
	f.Add("-----BEGIN PRIVATE KEY-----")
	f.Fuzz(func(t *testing.T, s string) {
		out := String(s)
		if again := String(out); again != out {
			t.Fatalf("String(%q) = %q, but String of that = %q", s, out, again)
		}
		if len(s) > 0 && out == "" {
			t.Fatalf("String(%q) is empty", s)
		}
		for _, sp := range Find(s) {
			if sp[0] < 0 || sp[1] > len(s) || sp[0] >= sp[1] {
				t.Fatalf("Find(%q) returned span %v", s, sp)
			}
		}
	})
}

// TestPlantsEveryEncoding writes every plant in every encoding between
// every pair of separators, for a few cut points.
func TestPlantsEveryEncoding(t *testing.T) {
	for _, p := range plants {
		for e := 0; e < numEncodings; e++ {
			for k := 0; k < 12; k++ {
				for _, sep := range seps {
					written := encode(p, e, k)
					in := "Error: 401" + string(sep) + written + string(sep) + "please check"
					if w := leaked(p.body, String(in)); w != "" {
						t.Errorf("plant %q encoding %d (k=%d, sep %q) leaks %q: %q", p.text, e, k, sep, w, String(in))
					}
				}
			}
		}
	}
}
