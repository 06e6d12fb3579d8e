package main

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/ratelimit-go/ratelimit"
)

// minAdminToken is the shortest RATELIMIT_ADMIN_TOKEN the example takes.
const minAdminToken = 16

// resetter is what /admin/reset resets: the limiters in force when a
// request comes (with -rules, a reload may have replaced them).
type resetter struct {
	api   func() *ratelimit.Limiter // /api/, per API key
	login []loginLimit
}

// loginLimit is a limiter of /login and how it keys a login.
type loginLimit struct {
	limiter   func() *ratelimit.Limiter
	byAddress bool // keyed by account and address: reset only given one
	key       func(account, address string) (string, error)
}

// adminOnly answers only requests that carry "Authorization: Bearer
// TOKEN": a header the client must know, which no proxy adds, unlike an
// address a proxy on the loopback interface makes every request come from.
// Without a token every request is refused: the admin routes are off.
func adminOnly(token string, next http.Handler) http.Handler {
	want := sha256.Sum256([]byte(token)) // compared as hashes: in constant time whatever the lengths
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if token == "" {
			http.Error(w, "admin routes are off: start the server with RATELIMIT_ADMIN_TOKEN set", http.StatusForbidden)
			return
		}
		given, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		got := sha256.Sum256([]byte(given))
		if !ok || subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// resetHandler is support's "unblock this customer": POST
// /admin/reset?api_key=K resets that key's /api/ budgets at once, and
// ?account=A&address=IP the account's login budgets, with its block from
// that address (address is optional: the account's own budget alone).
// Mount it behind adminOnly.
func (rs resetter) handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := context.WithoutCancel(r.Context())
		q := r.URL.Query()
		var err error
		answer := "reset\n"
		switch {
		case q.Get("api_key") != "":
			err = rs.api().Reset(ctx, "x-api-key:"+q.Get("api_key"))
		case q.Get("account") != "":
			var partly bool
			partly, err = rs.resetLogin(ctx, q.Get("account"), q.Get("address"))
			if partly {
				answer = "reset the account's own budget; its blocks per address stay: give address= to lift one\n"
			}
		default:
			http.Error(w, "want api_key= or account= (and address=)", http.StatusBadRequest)
			return
		}
		if err != nil {
			http.Error(w, "reset failed: "+err.Error(), http.StatusBadRequest)
			return
		}
		w.Write([]byte(answer))
	})
}

// resetLogin resets account's login budgets, and with address those of
// the account from that address, with its block. It reports whether it
// left some out: without address, those per account and address.
func (rs resetter) resetLogin(ctx context.Context, account, address string) (partly bool, err error) {
	if address != "" {
		if _, err := netip.ParseAddr(address); err != nil {
			return false, fmt.Errorf("address %q is not an IP address", address)
		}
	}
	done := 0
	for _, l := range rs.login {
		if l.byAddress && address == "" {
			partly = true
			continue
		}
		key, err := l.key(account, address)
		if err != nil {
			return false, err
		}
		if err := l.limiter().Reset(ctx, key); err != nil {
			return false, err
		}
		done++
	}
	if done == 0 {
		return false, fmt.Errorf("want address= too: the login is limited per account and address")
	}
	return partly, nil
}

// ipKeyOf returns what ratelimit.KeyByIP gives a request from address.
func ipKeyOf(address string) (string, error) {
	r := &http.Request{Header: http.Header{}, RemoteAddr: net.JoinHostPort(address, "0")}
	return ratelimit.KeyByIP()(r)
}

// pairKey returns the key of a login limiter keyed by account, as
// accountPart makes it, and address.
func pairKey(accountPart string) func(account, address string) (string, error) {
	return func(account, address string) (string, error) {
		ip, err := ipKeyOf(address)
		return accountPart + account + "|" + ip, err
	}
}
