package grpclimit

import (
	"net/http"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// answerStatus is the HTTP status that a call's answer err counts as for
// a limiter that counts only some answers (ratelimit.WithCountIf, such as
// CountStatus(401, 403) for failed logins): the status of its gRPC code
// as gRPC's HTTP mapping gives it, or 500 if the handler did not return
// (it panicked).
func answerStatus(err error, returned bool) int {
	if !returned {
		return http.StatusInternalServerError
	}
	if c := status.Code(err); int(c) < len(httpStatus) {
		return httpStatus[c]
	}
	return http.StatusInternalServerError // a code gRPC does not define
}

// httpStatus maps each gRPC code to an HTTP status, as grpc-gateway does.
var httpStatus = [...]int{
	codes.OK:                 http.StatusOK,
	codes.Canceled:           499,
	codes.Unknown:            http.StatusInternalServerError,
	codes.InvalidArgument:    http.StatusBadRequest,
	codes.DeadlineExceeded:   http.StatusGatewayTimeout,
	codes.NotFound:           http.StatusNotFound,
	codes.AlreadyExists:      http.StatusConflict,
	codes.PermissionDenied:   http.StatusForbidden,
	codes.ResourceExhausted:  http.StatusTooManyRequests,
	codes.FailedPrecondition: http.StatusBadRequest,
	codes.Aborted:            http.StatusConflict,
	codes.OutOfRange:         http.StatusBadRequest,
	codes.Unimplemented:      http.StatusNotImplemented,
	codes.Internal:           http.StatusInternalServerError,
	codes.Unavailable:        http.StatusServiceUnavailable,
	codes.DataLoss:           http.StatusInternalServerError,
	codes.Unauthenticated:    http.StatusUnauthorized,
}
