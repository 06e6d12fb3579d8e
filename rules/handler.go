package rules

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ratelimit-go/ratelimit"
)

// Option configures a [Handler]: what a rules file cannot say.
// A nil Option is ignored.
type Option func(*options)

type options struct {
	user     func(*http.Request) (string, bool)
	limiters []ratelimit.Option
}

// WithUser gives the identity that the key user stands for: f returns the
// request's user, such as the subject that authentication middleware put
// in its context, and false if it has none. A request without one is
// answered 401 "missing user", unless user is one alternative of a key
// list such as [user, ip], which then falls to the next. The key is
// "user:" + the id. Without WithUser, a rule keyed by user is an error.
func WithUser(f func(*http.Request) (user string, ok bool)) Option {
	return func(o *options) { o.user = f }
}

// WithLimiterOptions adds opts to every rule's limiter, after the rule's
// own (so they can override them), such as ratelimit.WithObserver or
// ratelimit.WithFallback. A rule's limiter that counts only some
// responses (a count in the file, or a ratelimit.WithCountIf given here)
// has them counted after next answers.
func WithLimiterOptions(opts ...ratelimit.Option) Option {
	return func(o *options) { o.limiters = append(o.limiters, opts...) }
}

// Handler serves requests through the limiters of a set of rules, which
// [Handler.Reload] replaces while requests are in flight: each request
// sees one set, old or new, never a mix. It is safe for concurrent use by
// multiple goroutines.
//
// A request that matches a rule's pattern (as http.ServeMux matches, most
// specific first) passes through that rule's limiter first; one that
// matches none goes straight to next. The rules only choose limiters: next
// still routes the request, and may read its path otherwise than ServeMux
// (decoded, through path.Clean, in lower case), so a request passes
// through the limiter of every rule that one of those readings matches,
// as match.go describes: no form of a path that reaches a rule's handler
// skips the rule's limit.
type Handler struct {
	store ratelimit.Store
	next  http.Handler
	opts  options

	mu  sync.Mutex // one reload at a time
	set atomic.Pointer[ruleSet]
}

// ruleSet is an immutable set of rules with their limiters.
type ruleSet struct {
	cfg       *Config
	mux       *http.ServeMux // the rules' patterns, to match requests
	byPattern map[string]*entry
	byName    map[string]*entry

	// The patterns in lower case, for routers that fold case: see match.go.
	folded   patterns
	byFolded map[string][]*entry
	upper    bool // a pattern has upper case
}

type entry struct {
	rule    Rule
	limiter *ratelimit.Limiter
}

// NewHandler returns next behind the rules of cfg, whose limiters take
// tokens from store.
func NewHandler(cfg *Config, store ratelimit.Store, next http.Handler, opts ...Option) (*Handler, error) {
	if cfg == nil || store == nil || next == nil {
		return nil, errors.New("rules: NewHandler: nil config, store or handler")
	}
	h := &Handler{store: store, next: next}
	for _, o := range opts {
		if o == nil {
			continue // a nil Option is none
		}
		o(&h.opts)
	}
	if _, err := h.Apply(cfg); err != nil {
		return nil, err
	}
	return h, nil
}

// Handler returns next behind the config's rules; see [Handler]. opts
// apply to every rule's limiter. For reloads and the user key, use
// [NewHandler].
func (c *Config) Handler(store ratelimit.Store, next http.Handler, opts ...ratelimit.Option) (http.Handler, error) {
	return NewHandler(c, store, next, WithLimiterOptions(opts...))
}

// ServeHTTP passes req through the limiter of the rule it matches in the
// rule set in force, then to next; a request no rule matches goes straight
// to next.
func (h *Handler) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	var buf [maxHits]hit
	hits := h.set.Load().hits(req, buf[:0])
	var settle settling
	defer settle.done()
	rw := w
	for _, hit := range hits {
		keyed := req.WithContext(req.Context()) // the limiter sees the rule's pattern
		keyed.Pattern = hit.pattern
		a, ok := hit.e.limiter.Begin(rw, keyed)
		if a != nil {
			rw = settle.add(a, w) // count.go
		}
		if !ok {
			settle.returned = true // the limiter answered
			return
		}
	}
	h.next.ServeHTTP(rw, req)
	settle.returned = true
}

// Config returns the rules in force. Do not change it.
func (h *Handler) Config() *Config { return h.set.Load().cfg }

// Limiter returns the limiter of the rule named name in force, or nil.
func (h *Handler) Limiter(name string) *ratelimit.Limiter {
	if e, ok := h.set.Load().byName[name]; ok {
		return e.limiter
	}
	return nil
}

// String describes the rules in force and their limits, one rule after
// another, separated by "; ".
func (h *Handler) String() string {
	var out []string
	for _, r := range h.set.Load().cfg.Rules {
		out = append(out, r.String())
	}
	return strings.Join(out, "; ")
}

// build makes the rule set of cfg, reusing the limiters of old's rules
// that cfg keeps as they were.
func (h *Handler) build(cfg *Config, old *ruleSet) (*ruleSet, Changes, error) {
	cfg = &Config{
		TrustedProxies: slices.Clone(cfg.TrustedProxies), ClientIPHeader: cfg.ClientIPHeader,
		TrustUnixSocket: cfg.TrustUnixSocket, Rules: slices.Clone(cfg.Rules), file: cfg.file,
	}
	set := &ruleSet{cfg: cfg, byPattern: map[string]*entry{}, byName: map[string]*entry{}}
	keys := cfg.keys(h.opts.user)
	pats := newPatterns()
	limiters := limiterNames{}
	var ch Changes
	for i, r := range cfg.Rules {
		fail := func(err error) (*ruleSet, Changes, error) {
			return nil, Changes{}, &Error{File: cfg.file, Line: r.Line, Rule: r.Name, Index: i + 1, Err: err}
		}
		if _, dup := set.byName[r.Name]; dup {
			return fail(errors.New("name used twice"))
		}
		if err := limiters.claim(r); err != nil {
			return fail(err)
		}
		var prev *entry
		if old != nil {
			prev = old.byName[r.Name]
		}
		e := &entry{rule: r}
		switch {
		case prev == nil:
			ch.Added = append(ch.Added, r.Name)
		case !sameRule(prev.rule, r, old.cfg, cfg):
			ch.Changed = append(ch.Changed, r.Name)
		}
		if prev != nil && sameLimiter(prev.rule, r, old.cfg, cfg) {
			e.limiter = prev.limiter // keeps its deny cache and breaker
		} else {
			l, err := keys.limiter(r, h.store, h.opts.limiters)
			if err != nil {
				return fail(errors.New(errLimit(err)))
			}
			e.limiter = l
		}
		if err := pats.add(r.Match, r.Name); err != nil {
			return fail(err)
		}
		set.byName[r.Name] = e
		set.byPattern[r.Match] = e
	}
	if old != nil {
		for _, r := range old.cfg.Rules {
			if _, ok := set.byName[r.Name]; !ok {
				ch.Removed = append(ch.Removed, r.Name)
			}
		}
	}
	set.mux = pats.mux
	if err := set.fold(cfg.Rules); err != nil {
		return nil, Changes{}, err
	}
	return set, ch, nil
}
