package ratelimit_test

import (
	"net/http/httptest"
	"testing"

	"github.com/ratelimit-go/ratelimit"
)

func FuzzKeyByHeader(f *testing.F) {
	f.Add("abc")
	f.Add("")
	kf := ratelimit.KeyByHeader("X-API-Key")
	f.Fuzz(func(t *testing.T, v string) {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("X-API-Key", v)
		k, err := kf(r)
		if v == "" {
			if err == nil {
				t.Fatal("no error for an empty header")
			}
			return
		}
		if err != nil || k != "x-api-key:"+v {
			t.Fatalf("KeyByHeader = %q, %v", k, err)
		}
	})
}
