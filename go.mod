module github.com/erradvisor/erradvisor

go 1.26
