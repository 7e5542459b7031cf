module github.com/erradvisor/erradvisor/examples/resilience

go 1.23.0

require (
	github.com/cenkalti/backoff/v5 v5.0.3
	github.com/erradvisor/erradvisor v0.1.0
	github.com/failsafe-go/failsafe-go v0.9.8
	github.com/google/go-cmp v0.7.0
	go.yaml.in/yaml/v3 v3.0.6
)

require github.com/bits-and-blooms/bitset v1.24.4 // indirect
