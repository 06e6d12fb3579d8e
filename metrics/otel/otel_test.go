package ratelimitotel_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ratelimit-go/ratelimit"
	ratelimitotel "github.com/ratelimit-go/ratelimit/metrics/otel"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

var errDown = errors.New("store down")

// downStore fails every call. It is not Local, so limiters on it get a time
// budget and a breaker, as on Redis.
type downStore struct{}

func (downStore) AllowN(context.Context, string, ratelimit.Limit, int) (ratelimit.Result, error) {
	return ratelimit.Result{}, errDown
}

func newMetrics(t *testing.T) (*sdkmetric.ManualReader, *ratelimitotel.Metrics) {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	m, err := ratelimitotel.New(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return reader, m
}

func newLimiter(t *testing.T, store ratelimit.Store, limit ratelimit.Limit, opts ...ratelimit.Option) *ratelimit.Limiter {
	t.Helper()
	l, err := ratelimit.New(store, limit, opts...)
	if err != nil {
		t.Fatalf("ratelimit.New: %v", err)
	}
	return l
}

// serve sends n requests from one client through l and counts the answers
// by status code.
func serve(l *ratelimit.Limiter, n int) map[int]int {
	h := l.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	codes := map[int]int{}
	for range n {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = "192.0.2.1:1234"
		h.ServeHTTP(w, r)
		codes[w.Code]++
	}
	return codes
}

// collect reads every data point of reader as "metric{k=v,...}" -> value
// (the count, for a histogram).
func collect(t *testing.T, reader *sdkmetric.ManualReader) map[string]float64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatalf("Collect: %v", err)
	}
	got := map[string]float64{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != ratelimitotel.ScopeName {
			t.Errorf("scope %q, want %q", sm.Scope.Name, ratelimitotel.ScopeName)
		}
		for _, md := range sm.Metrics {
			switch data := md.Data.(type) {
			case metricdata.Sum[int64]:
				if !data.IsMonotonic {
					t.Errorf("%s: not monotonic", md.Name)
				}
				for _, p := range data.DataPoints {
					got[md.Name+attrs(p.Attributes)] = float64(p.Value)
				}
			case metricdata.Gauge[int64]:
				for _, p := range data.DataPoints {
					got[md.Name+attrs(p.Attributes)] = float64(p.Value)
				}
			case metricdata.Histogram[float64]:
				for _, p := range data.DataPoints {
					got[md.Name+attrs(p.Attributes)] = float64(p.Count)
				}
			default:
				t.Errorf("%s: unexpected data %T", md.Name, md.Data)
			}
		}
	}
	return got
}

func attrs(s attribute.Set) string {
	var kv []string
	for _, a := range s.ToSlice() {
		kv = append(kv, fmt.Sprintf("%s=%s", strings.TrimPrefix(string(a.Key), "ratelimit."), a.Value.Emit()))
	}
	sort.Strings(kv)
	return "{" + strings.Join(kv, ",") + "}"
}

func TestMetricsCountKnownTraffic(t *testing.T) {
	reader, m := newMetrics(t)
	store := memory.New()
	defer store.Close()

	api := newLimiter(t, store, ratelimit.PerMinute(10),
		ratelimit.WithName("api"), ratelimit.WithObserver(m.Observer()))
	shadow := newLimiter(t, store, ratelimit.PerMinute(10),
		ratelimit.WithName("shadow"), ratelimit.WithDryRun(), ratelimit.WithObserver(m.Observer()))
	remote := newLimiter(t, downStore{}, ratelimit.PerMinute(10),
		ratelimit.WithName("remote"), ratelimit.WithFailOpen(), ratelimit.WithObserver(m.Observer()))

	if got := serve(api, 15); got[200] != 10 || got[429] != 5 {
		t.Fatalf("api answers %v, want 10×200 and 5×429", got)
	}
	if got := serve(shadow, 15); got[200] != 15 {
		t.Fatalf("shadow answers %v, want 15×200", got)
	}
	// The first five calls fail and open the breaker (the default is five
	// failures); the next three do not call the store. All fail open.
	if got := serve(remote, 8); got[200] != 8 {
		t.Fatalf("remote answers %v, want 8×200", got)
	}

	got := collect(t, reader)
	failPolicy := ratelimit.FromFailurePolicy.String()
	want := map[string]float64{
		"ratelimit.requests{limiter=api,policy=api,result=allowed,source=store}":                  10,
		"ratelimit.requests{limiter=api,policy=api,result=denied,source=store}":                   5,
		"ratelimit.requests{limiter=shadow,policy=shadow,result=allowed,source=store}":            10,
		"ratelimit.requests{limiter=shadow,policy=shadow,result=dry_run_denied,source=store}":     5,
		"ratelimit.requests{limiter=remote,policy=remote,result=error,source=" + failPolicy + "}": 8,
		// Every call to a store is timed, the failed ones too; the three
		// the open breaker answered called nothing.
		"ratelimit.store.duration{limiter=api}":    15,
		"ratelimit.store.duration{limiter=shadow}": 15,
		"ratelimit.store.duration{limiter=remote}": 5,
		"ratelimit.breaker.state{limiter=remote}":  float64(ratelimit.BreakerOpen),
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok && v != 0 {
			t.Errorf("unexpected %s = %v", k, v)
		}
	}
}

func TestMetricsHoldNoRequestData(t *testing.T) {
	reader, m := newMetrics(t)
	store := memory.New()
	defer store.Close()
	l := newLimiter(t, store, ratelimit.PerMinute(1), ratelimit.WithName("api"),
		ratelimit.WithKeyFunc(ratelimit.KeyByHeader("X-API-Key")), ratelimit.WithObserver(m.Observer()))
	h := l.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	for i := range 50 {
		r := httptest.NewRequest(http.MethodGet, "/secret-path", nil)
		r.Header.Set("X-API-Key", fmt.Sprintf("secret-%d", i))
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
	got := collect(t, reader)
	if len(got) != 2 {
		t.Errorf("%d series after 50 keys, want 2 (requests and duration): %v", len(got), got)
	}
	for k := range got {
		if strings.Contains(k, "secret") {
			t.Errorf("series %s holds request data", k)
		}
	}
}

func TestMisconfiguredStoreIsCounted(t *testing.T) {
	reader, m := newMetrics(t)
	o := m.Observer()
	err := fmt.Errorf("redis: MOVED 1234 10.0.0.2:6379: %w", ratelimit.ErrMisconfiguredStore)
	for range 3 {
		o.Decision(ratelimit.Decision{Limiter: "api", Policy: "api", Outcome: ratelimit.OutcomeErrored,
			Source: ratelimit.FromFailurePolicy, Err: err})
	}
	o.Decision(ratelimit.Decision{Limiter: "api", Policy: "api", Outcome: ratelimit.OutcomeErrored,
		Source: ratelimit.FromFailurePolicy, Err: errDown})
	if got := collect(t, reader)["ratelimit.store.misconfigured{limiter=api}"]; got != 3 {
		t.Errorf("ratelimit.store.misconfigured = %v, want 3 (not the passing failure)", got)
	}
}

func TestNewRefusesNilProvider(t *testing.T) {
	if _, err := ratelimitotel.New(nil); err == nil {
		t.Fatal("New(nil) succeeded")
	}
}

func TestRecordingADecisionAllocatesNothing(t *testing.T) {
	_, m := newMetrics(t)
	o := m.Observer()
	d := ratelimit.Decision{Limiter: "api", Policy: "api", Outcome: ratelimit.OutcomeAllowed, Source: ratelimit.FromStore}
	o.Decision(d) // makes the series
	if n := testing.AllocsPerRun(1000, func() { o.Decision(d) }); n != 0 {
		t.Errorf("a decision allocates %v times, want 0", n)
	}
}
