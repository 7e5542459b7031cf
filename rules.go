package erradvisor
type ruleSet struct{}
