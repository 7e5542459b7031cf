package erradvisor

// Advisory notes, their templates and the framing of provider text live here.
