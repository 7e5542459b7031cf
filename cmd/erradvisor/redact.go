package main

import "github.com/erradvisor/erradvisor"

// redact removes secrets from a provider or command text before the command
// prints it, with the library's one redactor. Every such text the command
// prints (replay, explain, and classify where it echoes text) goes through
// it.
func redact(s string) string { return erradvisor.Redact(s) }
