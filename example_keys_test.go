package ratelimit_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// printingStore is a store that other servers share (not Local, as Redis),
// printing the keys it is asked about.
type printingStore struct{ *memory.Store }

func (printingStore) Local() bool { return false }

func (s printingStore) AllowN(ctx context.Context, key string, l ratelimit.Limit, n int) (ratelimit.Result, error) {
	if client, ok := strings.CutPrefix(key, "api/h:"); ok {
		key = "api/h:" + strings.Repeat("•", len(client)) // the hash changes with the secret
	}
	fmt.Println("store key:", key)
	return s.Store.AllowN(ctx, key, l, n)
}

// On a store that several servers share, API keys reach it as a keyed hash
// under a secret that every server is given; addresses stay readable.
func ExampleWithKeySecret() {
	mem := memory.New()
	defer mem.Close()
	secret := []byte("0123456789abcdef0123456789abcdef") // from your secret store
	l, err := ratelimit.New(printingStore{mem}, ratelimit.PerHour(100), ratelimit.WithName("api"),
		ratelimit.WithKeyFunc(ratelimit.FirstOf(ratelimit.KeyByHeader("X-API-Key"), ratelimit.KeyByIP())),
		ratelimit.WithKeySecret(secret))
	if err != nil {
		panic(err)
	}
	r := httptest.NewRequest("GET", "/", nil)
	l.Admit(httptest.NewRecorder(), r)
	r.Header.Set("X-API-Key", "sk-live-0123456789")
	l.Admit(httptest.NewRecorder(), r)
	// Output:
	// store key: api/ip:192.0.2.1
	// store key: api/h:••••••••••••••••••••••
}

// Keys that are no secret, such as tenant names, can stay readable.
func ExampleWithPlainKeys() {
	mem := memory.New()
	defer mem.Close()
	l, err := ratelimit.New(printingStore{mem}, ratelimit.PerHour(100), ratelimit.WithName("api"),
		ratelimit.WithKeyFunc(ratelimit.KeyByHeader("X-Tenant")), ratelimit.WithPlainKeys())
	if err != nil {
		panic(err)
	}
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("X-Tenant", "acme")
	l.Admit(httptest.NewRecorder(), r)
	// Output: store key: api/x-tenant:acme
}

// Without a secret, a shared store never sees a key that needs the hash:
// New refuses a limiter keyed by a KeyFunc of its own there, and a key
// given at the call (AllowN, Admit with a key function of an adapter) is
// an error, never a plain key in the store.
func ExampleWithKeySecret_missing() {
	mem := memory.New()
	defer mem.Close()
	_, err := ratelimit.New(printingStore{mem}, ratelimit.PerHour(100), ratelimit.WithKeyFunc(ratelimit.KeyByHeader("X-API-Key")))
	fmt.Println(errors.Is(err, ratelimit.ErrBadConfig))

	l, err := ratelimit.New(printingStore{mem}, ratelimit.PerHour(100))
	if err != nil {
		panic(err)
	}
	_, err = l.Allow(context.Background(), "sk-live-0123456789")
	fmt.Println(errors.Is(err, ratelimit.ErrBadConfig))
	// Output:
	// true
	// true
}
