//go:build !race

package hint

const raceEnabled = false
