package erradvisor

// The retry policy, backoff schedule and Retrier live here.
