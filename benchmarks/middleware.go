package benchmarks

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/didip/tollbooth/v7"
	tollboothlimiter "github.com/didip/tollbooth/v7/limiter"
	"github.com/gin-gonic/gin"
	"github.com/go-chi/httprate"
	"github.com/labstack/echo/v4"
	echomw "github.com/labstack/echo/v4/middleware"
	"github.com/sethvargo/go-limiter/httplimit"
	"github.com/sethvargo/go-limiter/memorystore"
	"github.com/throttled/throttled/v2"
	"github.com/throttled/throttled/v2/store/memstore"
	ulule "github.com/ulule/limiter/v3"
	ulelegin "github.com/ulule/limiter/v3/drivers/middleware/gin"
	ulelestdlib "github.com/ulule/limiter/v3/drivers/middleware/stdlib"
	ulelememory "github.com/ulule/limiter/v3/drivers/store/memory"
	"golang.org/x/time/rate"

	"github.com/ratelimit-go/ratelimit"
	echolimit "github.com/ratelimit-go/ratelimit/adapters/echo"
	ginlimit "github.com/ratelimit-go/ratelimit/adapters/gin"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// Noop is the handler behind every middleware: it writes a status and
// nothing else.
var Noop = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })

// HTTPNames lists the net/http middlewares: "bare" is the handler alone,
// the baseline.
var HTTPNames = []string{"bare", "ours", "httprate", "sethvargo", "ulule", "throttled", "tollbooth"}

// NewHTTP returns next behind the middleware called name, keyed by the
// client's address and writing its rate-limit headers, and a func that
// closes what it made.
func NewHTTP(name string, b Budget, next http.Handler) (http.Handler, func(), error) {
	none := func() {}
	switch name {
	case "bare":
		return next, none, nil
	case "ours":
		s := memory.New()
		l, err := ratelimit.New(s, ratelimit.Limit{Rate: b.Rate, Period: b.Period})
		if err != nil {
			return nil, none, err
		}
		return l.Handler(next), func() { s.Close() }, nil
	case "httprate":
		return httprate.LimitByIP(b.Rate, b.Period)(next), none, nil
	case "sethvargo":
		s, err := memorystore.New(&memorystore.Config{Tokens: uint64(b.Rate), Interval: b.Period})
		if err != nil {
			return nil, none, err
		}
		m, err := httplimit.NewMiddleware(s, httplimit.IPKeyFunc())
		if err != nil {
			return nil, none, err
		}
		return m.Handle(next), func() { s.Close(context.Background()) }, nil
	case "ulule":
		s := ulelememory.NewStoreWithOptions(ulule.StoreOptions{Prefix: "bench", CleanUpInterval: time.Hour})
		l := ulule.New(s, ulule.Rate{Period: b.Period, Limit: int64(b.Rate)})
		return ulelestdlib.NewMiddleware(l).Handler(next), none, nil
	case "throttled":
		st, err := memstore.NewCtx(0)
		if err != nil {
			return nil, none, err
		}
		l, err := throttled.NewGCRARateLimiterCtx(st, throttled.RateQuota{
			MaxRate:  throttled.PerDuration(b.Rate, b.Period),
			MaxBurst: b.Rate - 1,
		})
		if err != nil {
			return nil, none, err
		}
		l.SetMaxCASAttemptsLimit(maxCASAttempts)
		h := &throttled.HTTPRateLimiterCtx{RateLimiter: l, VaryBy: &throttled.VaryBy{RemoteAddr: true}}
		return h.RateLimit(next), none, nil
	case "tollbooth":
		l := tollbooth.NewLimiter(float64(b.Rate)/b.Period.Seconds(), &tollboothlimiter.ExpirableOptions{DefaultExpirationTTL: b.Period})
		l.SetBurst(b.Rate)
		l.SetIPLookups([]string{"RemoteAddr"})
		return tollbooth.LimitHandler(l, next), none, nil
	}
	return nil, none, fmt.Errorf("benchmarks: no middleware %q", name)
}

// GinNames lists the Gin engines: "bare" has no limiter.
var GinNames = []string{"bare", "ours", "ulule"}

// NewGin returns a Gin engine serving a no-op GET / behind the limiter
// called name.
func NewGin(name string, b Budget) (http.Handler, func(), error) {
	gin.SetMode(gin.ReleaseMode)
	e := gin.New()
	none := func() {}
	closeFn := none
	switch name {
	case "bare":
	case "ours":
		s := memory.New()
		l, err := ratelimit.New(s, ratelimit.Limit{Rate: b.Rate, Period: b.Period})
		if err != nil {
			return nil, none, err
		}
		e.Use(ginlimit.Middleware(l))
		closeFn = func() { s.Close() }
	case "ulule":
		s := ulelememory.NewStoreWithOptions(ulule.StoreOptions{Prefix: "bench", CleanUpInterval: time.Hour})
		e.Use(ulelegin.NewMiddleware(ulule.New(s, ulule.Rate{Period: b.Period, Limit: int64(b.Rate)})))
	default:
		return nil, none, fmt.Errorf("benchmarks: no gin middleware %q", name)
	}
	e.GET("/", func(c *gin.Context) { c.Status(http.StatusOK) })
	return e, closeFn, nil
}

// EchoNames lists the Echo servers: "bare" has no limiter, "echo" is Echo's
// own middleware.RateLimiter on its memory store, "echo-ours" is that
// middleware on our memory store through the adapter's RateLimiterStore.
var EchoNames = []string{"bare", "ours", "echo", "echo-ours"}

// NewEcho returns an Echo server serving a no-op GET / behind the limiter
// called name.
func NewEcho(name string, b Budget) (http.Handler, func(), error) {
	e := echo.New()
	none := func() {}
	closeFn := none
	limit := ratelimit.Limit{Rate: b.Rate, Period: b.Period}
	switch name {
	case "bare":
	case "ours":
		s := memory.New()
		l, err := ratelimit.New(s, limit)
		if err != nil {
			return nil, none, err
		}
		e.Use(echolimit.Middleware(l))
		closeFn = func() { s.Close() }
	case "echo":
		e.Use(echomw.RateLimiter(echomw.NewRateLimiterMemoryStoreWithConfig(echomw.RateLimiterMemoryStoreConfig{
			Rate:      rate.Limit(float64(b.Rate) / b.Period.Seconds()),
			Burst:     b.Rate,
			ExpiresIn: time.Hour,
		})))
	case "echo-ours":
		s := memory.New()
		l, err := ratelimit.New(s, limit)
		if err != nil {
			return nil, none, err
		}
		e.Use(echomw.RateLimiter(echolimit.NewRateLimiterStore(l)))
		closeFn = func() { s.Close() }
	default:
		return nil, none, fmt.Errorf("benchmarks: no echo middleware %q", name)
	}
	e.GET("/", func(c echo.Context) error { return c.NoContent(http.StatusOK) })
	return e, closeFn, nil
}
