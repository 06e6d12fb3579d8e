package main

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ratelimit-go/ratelimit/store/memory"
)

func TestRoutes(t *testing.T) {
	store := memory.New()
	defer store.Close()
	mux, err := routes(store)
	if err != nil {
		t.Fatal(err)
	}
	checkRoutes(t, mux)
}

// TestRoutesFromFile: rules.yaml gives the same limits as the built-in routes.
func TestRoutesFromFile(t *testing.T) {
	store := memory.New()
	defer store.Close()
	h, err := routesFromFile(store, "rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	checkRoutes(t, h)
}

func checkRoutes(t *testing.T, mux http.Handler) {
	t.Helper()
	count := func(path string, n int, header map[string]string) (ok, limited int) {
		for range n {
			r := httptest.NewRequest("GET", path, nil)
			for k, v := range header {
				r.Header.Set(k, v)
			}
			w := httptest.NewRecorder()
			mux.ServeHTTP(w, r)
			switch w.Code {
			case http.StatusOK:
				ok++
			case http.StatusTooManyRequests:
				limited++
			default:
				t.Fatalf("%s: status %d", path, w.Code)
			}
		}
		return ok, limited
	}
	if ok, limited := count("/", 12, nil); ok != 10 || limited != 2 {
		t.Errorf("/: %d ok, %d limited; want 10 and 2", ok, limited)
	}
	if ok, limited := count("/export", 5, nil); ok != 4 || limited != 1 {
		t.Errorf("/export: %d ok, %d limited; want 4 and 1 (cost 5 of 20)", ok, limited)
	}
	if ok, _ := count("/api/items", 61, map[string]string{"X-API-Key": "k1"}); ok != 60 {
		t.Errorf("/api/ with a key: %d ok, want 60", ok)
	}
	if ok, _ := count("/api/items", 1, nil); ok != 1 {
		t.Error("/api/ without a key is not limited per IP")
	}
	if ok, _ := count("/healthz", 50, nil); ok != 50 {
		t.Error("/healthz is limited")
	}
}
