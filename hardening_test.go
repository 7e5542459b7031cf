package erradvisor

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
)

// exhaustedFixtures are the fixtures of the files written before the
// `retries_exhausted` mark whose texts say a client's retry layer gave up
// (botocore's "reached max retries: N", urllib3's and Ollama's "max retries
// exceeded").
var exhaustedFixtures = map[string]bool{
	"anthropic-bedrock-throttling-too-many-tokens-cli":             true,
	"anthropic-bedrock-throttling-too-many-requests":               true,
	"anthropic-bedrock-throttling-tokens-per-day":                  true,
	"holdout2-langchain-aws-bedrock-too-many-connections-converse": true,
	"holdout3-bedrock-claude21-throttled-after-retries":            true,
	"holdout3-urllib3-max-retries-name-resolution":                 true,
	"local-ollama-pull-no-such-host":                               true,
	"blindA-ragflow-siliconflow-max-retries-tpm":                   true,
	"blindA-django-chatgpt-no-route-to-host":                       true,
}

// TestFixturesRetriesExhausted checks Classification.RetriesExhausted on
// every fixture: true exactly for those marked `retries_exhausted: true`
// (see testdata/fixtures/hardening.yaml) and for exhaustedFixtures.
func TestFixturesRetriesExhausted(t *testing.T) {
	files, err := filepath.Glob("testdata/fixtures/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	marked := 0
	all := loadFixtures(t)
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var list []struct {
			Name             string `yaml:"name"`
			RetriesExhausted bool   `yaml:"retries_exhausted"`
		}
		if err := yaml.Unmarshal(data, &list); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		byName := map[string]bool{}
		for _, e := range list {
			byName[e.Name] = e.RetriesExhausted || exhaustedFixtures[e.Name]
			if e.RetriesExhausted {
				marked++
			}
		}
		for _, fx := range all {
			want, ok := byName[fx.Name]
			if !ok || fx.file != file {
				continue
			}
			got := Classify(fx.failure())
			if diff := cmp.Diff(want, got.RetriesExhausted); diff != "" {
				t.Errorf("%s: %s (rule %q): RetriesExhausted (-want +got):\n%s", file, fx.Name, got.Rule, diff)
			}
		}
	}
	if marked < 10 {
		t.Errorf("only %d fixtures marked retries_exhausted", marked)
	}
}
