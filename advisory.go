package erradvisor

// The Advisor, which scans a transcript for the notes of the next request, lives here.
