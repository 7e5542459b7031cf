module github.com/erradvisor/erradvisor

go 1.23

require (
	github.com/google/go-cmp v0.7.0
	go.yaml.in/yaml/v3 v3.0.6
)
