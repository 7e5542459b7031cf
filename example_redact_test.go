package erradvisor_test

import (
	"fmt"

	"github.com/erradvisor/erradvisor"
)

// Redact replaces secrets and keeps the labels around them readable.
func ExampleRedact() {
	fmt.Println(erradvisor.Redact("401 Incorrect API key provided: sk-proj-Ab12Cd34Ef56Gh78Ij90."))
	fmt.Println(erradvisor.Redact("GET /v1/models?key=AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY&alt=sse"))
	fmt.Println(erradvisor.Redact(`{"headers":{"Authorization":"Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl"}}`))
	fmt.Println(erradvisor.Redact("proxy https://bob:hunter2@proxy.internal:8080 refused; max_tokens=4096"))
	// Output:
	// 401 Incorrect API key provided: [redacted].
	// GET /v1/models?key=[redacted]&alt=sse
	// {"headers":{"Authorization":"Bearer [redacted]"}}
	// proxy https://bob:[redacted]@proxy.internal:8080 refused; max_tokens=4096
}
