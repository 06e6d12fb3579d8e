package rls

import (
	"io"
	"net/http"
	"sync/atomic"

	pb "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/protobuf/encoding/protojson"
)

// maxJSONBody bounds the body of a /json request.
const maxJSONBody = 1 << 20

// JSONHandler serves the reference's /json endpoint: a POSTed
// RateLimitRequest in protobuf JSON, answered with the RateLimitResponse
// in JSON, 200 when OK, 429 when over the limit; a body that does not
// parse, or a request the service refuses, is a 400.
func JSONHandler(svc *Service) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, maxJSONBody+1))
		if err != nil || len(body) > maxJSONBody {
			http.Error(w, http.StatusText(http.StatusBadRequest), http.StatusBadRequest)
			return
		}
		var req pb.RateLimitRequest
		if err := protojson.Unmarshal(body, &req); err != nil {
			http.Error(w, http.StatusText(http.StatusBadRequest), http.StatusBadRequest)
			return
		}
		resp, err := svc.ShouldRateLimit(r.Context(), &req)
		if err != nil {
			http.Error(w, http.StatusText(http.StatusBadRequest), http.StatusBadRequest)
			return
		}
		out, err := protojson.Marshal(resp)
		if err != nil {
			http.Error(w, http.StatusText(http.StatusInternalServerError), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if resp.OverallCode == pb.RateLimitResponse_OVER_LIMIT {
			w.WriteHeader(http.StatusTooManyRequests)
		}
		w.Write(out)
	})
}

// Health is the /healthcheck endpoint: "OK" while healthy, 500 otherwise.
// The zero value is unhealthy; it is safe for concurrent use.
type Health struct{ ok atomic.Bool }

// Set says whether the service is healthy.
func (h *Health) Set(ok bool) { h.ok.Store(ok) }

// ServeHTTP answers the health check.
func (h *Health) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	if !h.ok.Load() {
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	io.WriteString(w, "OK")
}
