package ginlimit_test

import (
	"net/http"
	"slices"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/ratelimit-go/ratelimit"
	ginlimit "github.com/ratelimit-go/ratelimit/adapters/gin"
)

// TestCountedResponsesAsSent: with WithCountIf, a request is settled with
// the status its client gets, however the handler answers: a status
// written, then a panic that gin.Recovery catches, counts as written; a
// panic before any answer as 500. Two failures a budget, six requests.
func TestCountedResponsesAsSent(t *testing.T) {
	tests := []struct {
		name    string
		handler gin.HandlerFunc
		want    []int // the statuses of the six requests
	}{
		{"401 set", func(c *gin.Context) {
			c.Status(http.StatusUnauthorized)
		}, []int{401, 401, 429, 429, 429, 429}},
		{"401 written, then a panic", func(c *gin.Context) {
			c.String(http.StatusUnauthorized, "wrong password")
			panic("after the answer")
		}, []int{401, 401, 429, 429, 429, 429}},
		{"401 set, not written, then a panic", func(c *gin.Context) {
			c.Status(http.StatusUnauthorized)
			panic("before the answer")
		}, []int{500, 500, 500, 500, 500, 500}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLimiter(t, ratelimit.WithCountIf(ratelimit.CountStatus(http.StatusUnauthorized)))
			e := gin.New()
			e.Use(gin.CustomRecovery(func(c *gin.Context, _ any) { c.AbortWithStatus(http.StatusInternalServerError) }))
			e.Use(ginlimit.Middleware(l))
			reached := 0
			e.GET("/login", func(c *gin.Context) {
				reached++
				tt.handler(c)
			})
			var got []int
			for range tt.want {
				got = append(got, get(e, "/login", nil).Code)
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("statuses %v, want %v", got, tt.want)
			}
			wantReached := 0
			for _, code := range tt.want {
				if code != http.StatusTooManyRequests {
					wantReached++
				}
			}
			if reached != wantReached {
				t.Fatalf("the handler ran %d times, want %d", reached, wantReached)
			}
		})
	}
}
