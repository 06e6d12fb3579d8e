package ratelimit_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

func ExamplePlan() {
	// The app's authentication knows each API key's plan and puts it in
	// the request's context; the limiter decides under that plan's limit.
	store := memory.New()
	defer store.Close()
	api, err := ratelimit.New(store, ratelimit.PerSecond(100), ratelimit.WithName("edge"),
		ratelimit.WithKeyFunc(ratelimit.KeyByHeader("X-API-Key")),
		ratelimit.WithHeaders(ratelimit.HeadersIETF),
		ratelimit.WithPolicy(ratelimit.Policy{Name: "api", Plans: []ratelimit.Plan{
			{Name: "free", Limit: ratelimit.PerMinute(60)},
			{Name: "pro", Limit: ratelimit.PerMinute(600)},
		}}))
	if err != nil {
		panic(err)
	}
	plans := map[string]string{"key-a": "free", "key-b": "pro"} // the app's customers
	auth := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			plan := plans[r.Header.Get("X-API-Key")]
			next.ServeHTTP(w, r.WithContext(ratelimit.ContextWithPlan(r.Context(), plan)))
		})
	}
	h := auth(api.Handler(hello))
	for _, key := range []string{"key-a", "key-b"} {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("X-API-Key", key)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		fmt.Println(w.Header().Get("RateLimit-Policy"))
	}
	// Output:
	// "edge";q=100;w=1, "api.free";q=60;w=60
	// "edge";q=100;w=1, "api.pro";q=600;w=60
}

func ExampleContextWithPlan() {
	r := httptest.NewRequest("GET", "/", nil)
	r = r.WithContext(ratelimit.ContextWithPlan(r.Context(), "pro"))
	fmt.Println(ratelimit.PlanFrom(r.Context()))
	// Output: pro
}
