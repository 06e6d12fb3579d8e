package echolimit_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/labstack/echo/v5"
	"github.com/labstack/echo/v5/middleware"

	"github.com/ratelimit-go/ratelimit"
	echolimit "github.com/ratelimit-go/ratelimit/adapters/echov5"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// TestCountedResponsesAsSent: with WithCountIf, a request is settled with
// the status its client gets, however the handler answers: a status
// written before the handler returns an error, or before it panics; an
// error that the app's own HTTPErrorHandler answers; an error Echo's own
// handler answers. Two failures a budget, six wrong passwords: a form that
// sends 401 reaches the handler twice, then 429; one that sends another
// status is never counted.
func TestCountedResponsesAsSent(t *testing.T) {
	errBadPassword := errors.New("bad password")
	errUnanswered := errors.New("answered by no one")
	const counted = http.StatusUnauthorized
	tests := []struct {
		name    string
		handler echo.HandlerFunc
		want    []int // the statuses of the six requests
	}{
		{"an HTTPError returned", func(c *echo.Context) error {
			return echo.NewHTTPError(counted, "wrong password")
		}, []int{401, 401, 429, 429, 429, 429}},
		{"401 written, then an error returned for the log", func(c *echo.Context) error {
			_ = c.String(counted, "wrong password")
			return errors.New("login failed")
		}, []int{401, 401, 429, 429, 429, 429}},
		{"an error the app's error handler answers 401", func(c *echo.Context) error {
			return fmt.Errorf("login: %w", errBadPassword)
		}, []int{401, 401, 429, 429, 429, 429}},
		{"401 written, then a panic", func(c *echo.Context) error {
			_ = c.String(counted, "wrong password")
			panic("after the answer")
		}, []int{401, 401, 429, 429, 429, 429}},
		{"a panic before any answer", func(c *echo.Context) error {
			panic("before the answer")
		}, []int{500, 500, 500, 500, 500, 500}},
		{"a wrapped HTTPError", func(c *echo.Context) error {
			return fmt.Errorf("login: %w", echo.ErrUnauthorized)
		}, []int{401, 401, 429, 429, 429, 429}},
		// nothing writes the response (net/http sends 200): its cost is kept, the safe side
		{"an error no handler answers", func(c *echo.Context) error {
			return errUnanswered
		}, []int{200, 200, 429, 429, 429, 429}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := memory.New()
			defer store.Close()
			l, err := ratelimit.New(store, ratelimit.PerHour(2), ratelimit.WithCountIf(ratelimit.CountStatus(counted)))
			if err != nil {
				t.Fatal(err)
			}
			e := echo.New()
			defaultHandler := e.HTTPErrorHandler
			e.HTTPErrorHandler = func(c *echo.Context, err error) {
				switch {
				case errors.Is(err, errBadPassword):
					_ = c.String(counted, "wrong password")
				case errors.Is(err, errUnanswered):
				default:
					defaultHandler(c, err)
				}
			}
			e.Use(middleware.Recover())
			e.Use(echolimit.Middleware(l))
			reached := 0
			e.POST("/login", func(c *echo.Context) error {
				reached++
				return tt.handler(c)
			})
			var got []int
			for range tt.want {
				w := httptest.NewRecorder()
				e.ServeHTTP(w, httptest.NewRequest("POST", "/login", nil))
				got = append(got, w.Code)
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
