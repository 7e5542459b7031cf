//go:build race

package redact

// raceEnabled reports whether the race detector is on: timings are then
// too noisy to judge.
const raceEnabled = true
