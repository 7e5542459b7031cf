package bedrock_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/erradvisor/erradvisor"
	adapter "github.com/erradvisor/erradvisor/adapters/bedrock"
)

// Classify the error of a Converse call. The local server stands in for
// Bedrock and answers with a real overflow error.
func Example() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("x-amzn-ErrorType", "ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/")
		w.Header().Set("Date", "Mon, 12 May 2025 11:11:55 GMT")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"message":"Input is too long for requested model."}`)
	}))
	defer srv.Close()

	client := bedrockruntime.New(bedrockruntime.Options{
		BaseEndpoint: aws.String(srv.URL),
		Region:       "us-east-1",
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "AKID", SecretAccessKey: "secret"}, nil
		}),
		RetryMaxAttempts: 1, // the request loop decides, not the SDK
	})
	_, err := client.Converse(context.Background(), &bedrockruntime.ConverseInput{
		ModelId: aws.String("anthropic.claude-3-5-sonnet-20240620-v1:0"),
		Messages: []types.Message{{
			Role:    types.ConversationRoleUser,
			Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "hello"}},
		}},
	})
	if err != nil {
		f := adapter.Failure(err)
		c := erradvisor.Classify(f)
		fmt.Println(f.Status, f.Code, f.At.Format("2006-01-02"), c.Class, c.Reason)
	}
	// Output: 400 ValidationException 2025-05-12 overflow context_window
}

// Map the stop reason of a Converse response.
func ExampleStopReason() {
	fmt.Println(adapter.StopReason(types.StopReasonMaxTokens), adapter.StopReason(types.StopReasonGuardrailIntervened),
		adapter.StopReason(types.StopReasonModelContextWindowExceeded), adapter.StopReason(types.StopReasonMalformedToolUse))
	// Output: length refused contextWindow unknown
}
