package ratelimitotel_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ratelimit-go/ratelimit"
	ratelimitotel "github.com/ratelimit-go/ratelimit/metrics/otel"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// A limiter whose decisions are OpenTelemetry metrics. In a service, pass
// the provider your exporter is set up on (otel.GetMeterProvider()); here a
// manual reader shows what is recorded.
func Example() {
	reader := sdkmetric.NewManualReader()
	m, err := ratelimitotel.New(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
	if err != nil {
		panic(err)
	}
	store := memory.New()
	defer store.Close()
	api, err := ratelimit.New(store, ratelimit.PerMinute(2),
		ratelimit.WithName("api"), ratelimit.WithObserver(m.Observer()))
	if err != nil {
		panic(err)
	}
	h := api.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	for range 3 {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		panic(err)
	}
	for _, md := range rm.ScopeMetrics[0].Metrics {
		if sum, ok := md.Data.(metricdata.Sum[int64]); ok {
			for _, p := range sum.DataPoints {
				result, _ := p.Attributes.Value(ratelimitotel.ResultKey)
				fmt.Println(md.Name, result.AsString(), p.Value)
			}
		}
	}
	// Unordered output:
	// ratelimit.requests allowed 2
	// ratelimit.requests denied 1
}
