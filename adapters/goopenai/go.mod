module github.com/erradvisor/erradvisor/adapters/goopenai

go 1.23

require (
	github.com/erradvisor/erradvisor v0.1.0
	github.com/google/go-cmp v0.7.0
	github.com/sashabaranov/go-openai v1.43.0
)

require go.yaml.in/yaml/v3 v3.0.6 // indirect
