// Package benchmarks measures ratelimit against the libraries users would
// pick instead, on the same work: see README.md and run.sh.
//
// Every library is reached through a [Peer]: one decision for one key under
// one budget, so the suites run the same loop for each of them.
package benchmarks

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/didip/tollbooth/v7"
	tollboothlimiter "github.com/didip/tollbooth/v7/limiter"
	"github.com/go-chi/httprate"
	echomw "github.com/labstack/echo/v4/middleware"
	"github.com/sethvargo/go-limiter/memorystore"
	"github.com/throttled/throttled/v2"
	"github.com/throttled/throttled/v2/store/memstore"
	ulule "github.com/ulule/limiter/v3"
	ulelememory "github.com/ulule/limiter/v3/drivers/store/memory"
	"golang.org/x/time/rate"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// Budget is the work every peer is given: Rate requests per Period, with a
// bucket (or window) of Rate. The suites pick budgets that nothing exceeds,
// so every decision is an admission and every peer takes the same path.
type Budget struct {
	Rate   int
	Period time.Duration
}

// Peer is one library deciding for one key at a time.
type Peer struct {
	// Name is the library, as it appears in benchmark names (lib=Name).
	Name string
	// Allow takes one token from key's budget and reports whether it did.
	Allow func(key string) bool
	// Close stops what the library runs in the background, if anything,
	// and drops its state.
	Close func()
}

// PeerNames lists the in-process peers in the order the suites run them;
// ours comes first. x/time/rate has no keys, so it only serves as the floor
// of the hot-key suite (see [XTimeRate]).
var PeerNames = []string{"ours", "sethvargo", "throttled", "ulule", "httprate", "tollbooth", "echo"}

// NewPeer returns the peer called name, deciding under b.
func NewPeer(name string, b Budget) (Peer, error) {
	p := Peer{Name: name, Close: func() {}}
	switch name {
	case "ours":
		s := memory.New()
		l := ratelimit.Limit{Rate: b.Rate, Period: b.Period}
		ctx := context.Background()
		p.Allow = func(key string) bool {
			res, err := s.AllowN(ctx, key, l, 1)
			return err == nil && res.Allowed
		}
		p.Close = func() { s.Close() }

	case "sethvargo":
		s, err := memorystore.New(&memorystore.Config{Tokens: uint64(b.Rate), Interval: b.Period})
		if err != nil {
			return p, err
		}
		ctx := context.Background()
		p.Allow = func(key string) bool {
			_, _, _, ok, err := s.Take(ctx, key)
			return err == nil && ok
		}
		p.Close = func() { s.Close(ctx) }

	case "throttled":
		st, err := memstore.NewCtx(0) // 0: a plain map, no LRU bound
		if err != nil {
			return p, err
		}
		l, err := throttled.NewGCRARateLimiterCtx(st, throttled.RateQuota{
			MaxRate:  throttled.PerDuration(b.Rate, b.Period),
			MaxBurst: b.Rate - 1, // GCRA admits MaxBurst+1 at once
		})
		if err != nil {
			return p, err
		}
		// Its store is compare-and-swap; after 10 failed swaps (the
		// default) a decision is an error. Allow more, so that one hot key
		// from every core is decided, not refused.
		l.SetMaxCASAttemptsLimit(maxCASAttempts)
		ctx := context.Background()
		p.Allow = func(key string) bool {
			limited, _, err := l.RateLimitCtx(ctx, key, 1)
			return err == nil && !limited
		}

	case "ulule":
		// The store's cleaner goroutine has no Close: it stops when the
		// store is garbage collected. An interval longer than any run keeps
		// it idle meanwhile.
		s := ulelememory.NewStoreWithOptions(ulule.StoreOptions{Prefix: "bench", CleanUpInterval: time.Hour})
		l := ulule.New(s, ulule.Rate{Period: b.Period, Limit: int64(b.Rate)})
		ctx := context.Background()
		p.Allow = func(key string) bool {
			c, err := l.Get(ctx, key)
			return err == nil && !c.Reached
		}

	case "httprate":
		// httprate decides inside OnLimit, which wants a request and a
		// response; with no header names it writes nothing.
		l := httprate.NewRateLimiter(b.Rate, b.Period, httprate.WithResponseHeaders(httprate.ResponseHeaders{}))
		r := httptest.NewRequest("GET", "/", nil)
		w := &Writer{H: http.Header{}}
		p.Allow = func(key string) bool { return !l.OnLimit(w, r, key) }

	case "tollbooth":
		l := tollbooth.NewLimiter(float64(b.Rate)/b.Period.Seconds(), &tollboothlimiter.ExpirableOptions{DefaultExpirationTTL: b.Period})
		l.SetBurst(b.Rate)
		p.Allow = func(key string) bool { return !l.LimitReached(key) }

	case "echo":
		// Echo v4's memory store for middleware.RateLimiter: a map of
		// x/time/rate limiters behind one mutex.
		s := echomw.NewRateLimiterMemoryStoreWithConfig(echomw.RateLimiterMemoryStoreConfig{
			Rate:      rate.Limit(float64(b.Rate) / b.Period.Seconds()),
			Burst:     b.Rate,
			ExpiresIn: time.Hour,
		})
		p.Allow = func(key string) bool {
			ok, err := s.Allow(key)
			return err == nil && ok
		}

	default:
		return p, fmt.Errorf("benchmarks: no peer %q", name)
	}
	return p, nil
}

// maxCASAttempts is how many compare-and-swaps throttled may try per
// decision; see NewPeer.
const maxCASAttempts = 1000

// XTimeRate is the floor of the hot-key suite: one golang.org/x/time/rate
// Limiter, reading the clock on each call as a store must. It ignores key.
func XTimeRate(b Budget) Peer {
	l := rate.NewLimiter(rate.Limit(float64(b.Rate)/b.Period.Seconds()), b.Rate)
	return Peer{
		Name:  "xtimerate",
		Allow: func(string) bool { return l.AllowN(time.Now(), 1) },
		Close: func() {},
	}
}

// Writer is a minimal http.ResponseWriter, reused between requests so that
// the suites measure the limiter, not a recorder.
type Writer struct {
	H      http.Header
	Status int
}

func (w *Writer) Header() http.Header         { return w.H }
func (w *Writer) Write(b []byte) (int, error) { return len(b), nil }
func (w *Writer) WriteHeader(code int)        { w.Status = code }
