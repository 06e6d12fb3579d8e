package main

import (
	"net/http"
	"time"

	"github.com/ratelimit-go/ratelimit"
)

// The login's limits keep an attacker from locking a victim out: the block
// is per account and address, so guesses from elsewhere never block the
// victim's own address, and the account alone gets a looser limit with no
// block, which bounds guessing spread over many addresses.
const (
	loginPerAddress = 5                // failed attempts an hour per account and address
	loginBlock      = 15 * time.Minute // then that pair is blocked
	loginPerAccount = 20               // failed attempts an hour per account, from anywhere: no block
)

// logins are the /login limiters; both count failed attempts only (401,
// 403), so right passwords never spend a token.
type logins struct {
	pair    *ratelimit.Limiter // per account and address, with the block
	account *ratelimit.Limiter // per account, no block
}

// newLogins makes the /login limiters, keying addresses by ip.
func newLogins(store ratelimit.Store, ip ratelimit.KeyFunc, opts ...ratelimit.Option) (*logins, error) {
	failures := ratelimit.WithCountIf(ratelimit.CountStatus(http.StatusUnauthorized, http.StatusForbidden))
	pair, err := ratelimit.New(store, ratelimit.PerHour(loginPerAddress), append(opts,
		ratelimit.WithName("login"),
		ratelimit.WithKeyFunc(ratelimit.Compose(accountKey, ip)),
		failures,
		ratelimit.WithBlock(loginBlock),
	)...)
	if err != nil {
		return nil, err
	}
	account, err := ratelimit.New(store, ratelimit.PerHour(loginPerAccount), append(opts,
		ratelimit.WithName("login-account"),
		ratelimit.WithKeyFunc(accountKey),
		failures,
	)...)
	if err != nil {
		return nil, err
	}
	return &logins{pair: pair, account: account}, nil
}

// handler limits next by both limiters: the pair's first, so that a
// blocked pair spends nothing of the account's budget.
func (l *logins) handler(next http.Handler) http.Handler {
	return l.pair.Handler(l.account.Handler(next))
}

// String describes the limits, for the start-up log.
func (l *logins) String() string {
	return l.pair.String() + " failed attempts per account and address, then blocked " + loginBlock.String() +
		"; " + l.account.String() + " failed attempts per account, no block"
}

// accountKey keys a login by its account field (from the query or a form
// of at most 4 KiB: see limitBody).
func accountKey(r *http.Request) (string, error) {
	account := r.FormValue("account")
	if account == "" {
		return "", &ratelimit.MissingKeyError{What: "account", Status: http.StatusBadRequest}
	}
	return "account:" + account, nil
}

// limitBody bounds the body a handler reads.
func limitBody(n int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, n)
		next.ServeHTTP(w, r)
	})
}

// loginHandler accepts the demo password for every account.
var loginHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	if r.FormValue("password") != "correct-horse" {
		http.Error(w, "wrong account or password", http.StatusUnauthorized)
		return
	}
	w.Write([]byte("welcome\n"))
})
