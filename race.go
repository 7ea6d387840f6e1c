//go:build race

package main

// raceEnabled is true in binaries built with -race; -version reports it.
const raceEnabled = true
