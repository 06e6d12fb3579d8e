package rules

import (
	"reflect"
	"slices"
	"strings"
)

// Changes says what a reload changed, by rule name.
type Changes struct {
	Added   []string // rules new in the file
	Removed []string // rules gone from it
	Changed []string // rules whose fields changed: their limiters are new
}

// Empty reports whether nothing changed.
func (c Changes) Empty() bool {
	return len(c.Added) == 0 && len(c.Removed) == 0 && len(c.Changed) == 0
}

// String describes the changes, such as "added export; changed api", or
// "no changes".
func (c Changes) String() string {
	var out []string
	for _, part := range []struct {
		what  string
		names []string
	}{{"added", c.Added}, {"removed", c.Removed}, {"changed", c.Changed}} {
		if len(part.names) > 0 {
			out = append(out, part.what+" "+strings.Join(part.names, ", "))
		}
	}
	if len(out) == 0 {
		return "no changes"
	}
	return strings.Join(out, "; ")
}

// Reload parses data as a rules file and, if it is valid, serves by its
// rules from then on; see [Handler.Apply]. If it is not, the rules in force
// stay and the error says why.
func (h *Handler) Reload(data []byte) (Changes, error) {
	cfg, err := Parse(data)
	if err != nil {
		return Changes{}, err
	}
	return h.Apply(cfg)
}

// ReloadFile is [Handler.Reload] of the file at path, whose name the
// errors give.
func (h *Handler) ReloadFile(path string) (Changes, error) {
	cfg, err := Load(path)
	if err != nil {
		return Changes{}, err
	}
	return h.Apply(cfg)
}

// Apply builds the limiters of cfg and, if they all build, swaps them in
// atomically: requests in flight finish under the set they started with,
// later ones see the new set. A rule that keeps its name and every field
// (its pattern aside) keeps its limiter, deny cache and breaker state
// included; a rule that changed gets a new limiter. On an error nothing
// changes.
//
// Budgets live in the store under the limiter's name and its limits'
// names, so on the same store a new limiter finds the budgets of the
// limits that kept their names, whatever else changed. A limit that keeps
// its name but changes its value (rate, period, burst) does not start
// afresh: the stored state is read under the new value (a token bucket's
// tokens, capped at the new capacity; a window's count, against the new
// rate), so a client with 20 tokens left of 100 has 10 of a new 10. One
// exception: the store expires a key once its budget would be full under
// the value it was written with, so where the new value refills more
// slowly, a key that reaches that old expiry before its next request reads
// as new: a tightened limit can hand a client up to one capacity once. To
// start a limit afresh, or to rule that out, rename it. A limit whose
// algorithm changes starts afresh: each algorithm keeps its own keys.
func (h *Handler) Apply(cfg *Config) (Changes, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	set, ch, err := h.build(cfg, h.set.Load())
	if err != nil {
		return Changes{}, err
	}
	h.set.Store(set)
	return ch, nil
}

// sameLimiter reports whether rule b of config cb makes the same limiter
// as rule a of ca: the same fields but the pattern and line, and, if it
// keys by address, the same client-address settings.
func sameLimiter(a, b Rule, ca, cb *Config) bool {
	a.Match, b.Match, a.Line, b.Line = "", "", 0, 0
	if !reflect.DeepEqual(a, b) {
		return false
	}
	return !b.usesIP() || slices.Equal(ca.TrustedProxies, cb.TrustedProxies) &&
		ca.ClientIPHeader == cb.ClientIPHeader && ca.TrustUnixSocket == cb.TrustUnixSocket
}

// sameRule reports whether rule a became b unchanged.
func sameRule(a, b Rule, ca, cb *Config) bool {
	return a.Match == b.Match && sameLimiter(a, b, ca, cb)
}

func (r Rule) usesIP() bool {
	if usesIP(r.key()) {
		return true
	}
	for _, l := range r.Limits {
		if usesIP(l.Key) {
			return true
		}
	}
	return false
}
