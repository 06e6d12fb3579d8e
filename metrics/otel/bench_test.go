package ratelimitotel_test

import (
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/ratelimit-go/ratelimit"
	ratelimitotel "github.com/ratelimit-go/ratelimit/metrics/otel"
)

// BenchmarkDecision is the cost of recording one decision of a warmed
// limiter on the SDK: the hot path, which must not allocate.
func BenchmarkDecision(b *testing.B) {
	m, err := ratelimitotel.New(sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader())))
	if err != nil {
		b.Fatal(err)
	}
	o := m.Observer()
	d := ratelimit.Decision{Limiter: "api", Policy: "api", Outcome: ratelimit.OutcomeAllowed, Source: ratelimit.FromStore, Latency: 300 * time.Microsecond}
	o.Decision(d)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		o.Decision(d)
	}
}
