//go:build race

package wordmodel

const raceEnabled = true
