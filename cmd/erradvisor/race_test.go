//go:build race

package main

// raceEnabled is true under the race detector, which slows the replay
// about tenfold; timing tests scale their inputs down.
const raceEnabled = true
