//go:build !race

package erradvisor

const raceEnabled = false
