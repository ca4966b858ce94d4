package sqswire

import (
	"errors"
	"fmt"
	"net/http"
)

// apiError is an answer in SQS's error shape: the code a JSON client
// reads (its __type), the code a query client reads, and the sentence.
type apiError struct {
	status int
	json   string // the JSON protocol's error shape name
	query  string // the query protocol's error code
	msg    string
}

func (e *apiError) Error() string { return e.query + ": " + e.msg }

// sender reports whether the client is at fault (SQS's Type element).
func (e *apiError) sender() bool { return e.status < 500 }

func newErr(status int, json, query, format string, args ...any) *apiError {
	return &apiError{status: status, json: json, query: query, msg: fmt.Sprintf(format, args...)}
}

func errNoQueue(name string) *apiError {
	return newErr(400, "QueueDoesNotExist", "AWS.SimpleQueueService.NonExistentQueue", "The specified queue %q does not exist.", name)
}

func errInvalid(format string, args ...any) *apiError {
	return newErr(400, "InvalidParameterValue", "InvalidParameterValue", format, args...)
}

func errMissing(param string) *apiError {
	return newErr(400, "MissingParameter", "MissingParameter", "The request must contain the parameter %s.", param)
}

func errAttrName(name string) *apiError {
	return newErr(400, "InvalidAttributeName", "InvalidAttributeName", "Unknown Attribute %s.", name)
}

func errAttrValue(format string, args ...any) *apiError {
	return newErr(400, "InvalidAttributeValue", "InvalidAttributeValue", format, args...)
}

func errReceipt(handle string) *apiError {
	return newErr(400, "ReceiptHandleIsInvalid", "ReceiptHandleIsInvalid", "The input receipt handle %q is not a valid receipt handle.", handle)
}

func errNotInflight(format string, args ...any) *apiError {
	return newErr(400, "MessageNotInflight", "AWS.SimpleQueueService.MessageNotInflight", format, args...)
}

func errUnavailable(format string, args ...any) *apiError {
	return newErr(http.StatusServiceUnavailable, "ServiceUnavailable", "ServiceUnavailable", format, args...)
}

func errUnsupported(format string, args ...any) *apiError {
	return newErr(400, "UnsupportedOperation", "AWS.SimpleQueueService.UnsupportedOperation", format, args...)
}

var (
	errEmptyBatch  = newErr(400, "EmptyBatchRequest", "AWS.SimpleQueueService.EmptyBatchRequest", "There should be at least one entry in the request.")
	errTooMany     = newErr(400, "TooManyEntriesInBatchRequest", "AWS.SimpleQueueService.TooManyEntriesInBatchRequest", "Maximum number of entries per request are 10.")
	errNotDistinct = newErr(400, "BatchEntryIdsNotDistinct", "AWS.SimpleQueueService.BatchEntryIdsNotDistinct", "Two or more batch entries in the request have the same Id.")
)

func errBatchID(id string) *apiError {
	return newErr(400, "InvalidBatchEntryId", "AWS.SimpleQueueService.InvalidBatchEntryId",
		"A batch entry id %q can only contain alphanumeric characters, hyphens and underscores, up to 80 of them.", id)
}

// asAPI turns any error into an answer: an apiError as it is, anything
// else as an internal error.
func asAPI(err error) *apiError {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	return newErr(500, "InternalError", "InternalError", "%v", err)
}
