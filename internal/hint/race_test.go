//go:build race

package hint

// raceEnabled reports whether the race detector is on: allocation counts
// are then not measured.
const raceEnabled = true
