package rules

import (
	"fmt"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/ratelimit-go/ratelimit"
)

// Config is a parsed rules file.
type Config struct {
	// TrustedProxies are the proxies whose forwarding header the ip key
	// believes (see clientip.TrustProxies); none by default.
	TrustedProxies []netip.Prefix
	// ClientIPHeader is the one header those proxies write the client's
	// address to (see clientip.Header); empty means
	// X-Forwarded-For.
	ClientIPHeader string
	// TrustUnixSocket makes the ip key treat requests that came in over a
	// unix socket as coming from a trusted proxy (see
	// clientip.TrustUnixSocket); false by default.
	TrustUnixSocket bool
	// Plans are the file's plans (plans:), in its order, their limits
	// named as the file names them (a name may be empty). The rules that
	// use a plan hold their own copy of it, its limits named as their
	// policies: see [Rule.Plans].
	Plans []Plan
	// Rules are the file's rules, in its order.
	Rules []Rule

	file string // the file it was loaded from, for messages
}

// Rule is one rule of a rules file, checked, with the file's defaults
// applied.
type Rule struct {
	Name  string // the limiter's name: its namespace in the store
	Match string // http.ServeMux pattern
	// Limit is the first of Limits: the limiter's own, given to
	// ratelimit.New. A Rule built by hand may set Limit alone.
	Limit ratelimit.Limit
	// Limits are all the rule's limits, Limit first; a request passes only
	// if each allows it (see ratelimit.WithPolicy).
	Limits []Limit
	Key    []string // alternatives, each of parts joined with "+"
	Cost   int      // tokens per request
	// Headers is the style of the rate-limit headers (ratelimit.WithHeaders).
	Headers ratelimit.HeaderStyle
	// DryRun decides and reports but refuses nothing (ratelimit.WithDryRun).
	DryRun bool
	// FailClosed answers 503 when the store fails (on_error: closed,
	// ratelimit.WithFailClosed); false fails open.
	FailClosed bool
	// Timeout is the time budget of a decision (ratelimit.WithTimeout);
	// nil leaves the limiter's default.
	Timeout *time.Duration
	// ProblemJSON makes the 429 an RFC 9457 problem+json body
	// (ratelimit.WithDenyHandler(ratelimit.ProblemJSON())).
	ProblemJSON bool
	// DenyCache is how many denied keys the limiter remembers
	// (ratelimit.WithDenyCache); nil leaves the limiter's default.
	DenyCache *int
	// Breaker is the circuit breaker's settings (ratelimit.WithBreaker);
	// nil leaves the limiter's default.
	Breaker *Breaker
	// Plans, if set, are the plans a request of the rule is decided under,
	// by the plan its context names (ratelimit.ContextWithPlan), beside Limits,
	// which every plan shares. Each plan gives the same limit names; the
	// limits of one name, one per plan, are one ratelimit.Policy of the
	// rule with ratelimit.Plans (a name every plan gives alike is a policy
	// without plans). A request whose context names no plan of the rule is
	// answered 500 and told to the limiter's error handler, never a silent
	// default (an error wrapping ratelimit.ErrBadConfig).
	Plans []Plan
	// Count, if set, are the response status codes that take the rule's
	// cost, such as 401 and 403 for failed logins
	// (ratelimit.WithCountIf(ratelimit.CountStatus(Count...))); nil counts
	// every request.
	Count []int
	// Block is how long a key stays denied once the rule denies it
	// (ratelimit.WithBlock); 0 blocks nothing.
	Block time.Duration
	// Line is the rule's line in its file, for messages; 0 if unknown.
	Line int
}

// Limit is one named limit of a [Rule].
type Limit struct {
	// Name names the limit's policy in headers, metrics and the store's
	// keys; the first limit's names the rule's limiter, and is the rule's
	// name unless given.
	Name  string
	Limit ratelimit.Limit // the budget
	// Key keys this limit alone, such as ip for a per-address ceiling over
	// a per-API-key limit; nil means the rule's Key.
	Key []string
}

// Plan is one plan of a rules file, such as "free" or "pro": the limits of
// a request whose context names it (ratelimit.ContextWithPlan), in the rules that
// use it.
type Plan struct {
	Name   string  // 1 to 64 letters, digits, '.', '_' or '-'
	Limits []Limit // the plan's limits, each with a nil Key
}

// Breaker is the setting of a rule's circuit breaker.
type Breaker struct {
	Off      bool          // no breaker (breaker: off)
	Failures int           // consecutive failures that open it
	CoolDown time.Duration // how long it stays open before a probe
}

// Error is an error in a rules file. Its message names the file, the line,
// the rule and the field, such as
//
//	rules.yaml:7: rule "api": unknown field "burts" (fields: name, match, ...)
type Error struct {
	File  string // the file's path; empty for Parse
	Line  int    // 0 if unknown
	Rule  string // the rule's name; empty outside rules or if it has none
	Index int    // the rule's position, from 1; 0 outside rules
	Field string // such as "period" or "limits[2].rate"; empty for a whole entry
	Err   error  // what is wrong
}

// Error returns the message: file:line: rule "name": field: what is wrong.
func (e *Error) Error() string {
	var b strings.Builder
	switch {
	case e.File != "" && e.Line > 0:
		fmt.Fprintf(&b, "%s:%d: ", e.File, e.Line)
	case e.File != "":
		b.WriteString(e.File + ": ")
	case e.Line > 0:
		fmt.Fprintf(&b, "rules: line %d: ", e.Line)
	default:
		b.WriteString("rules: ")
	}
	switch {
	case e.Rule != "":
		fmt.Fprintf(&b, "rule %q: ", e.Rule)
	case e.Index > 0:
		fmt.Fprintf(&b, "rule %d: ", e.Index)
	}
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

// Load reads and parses the rules file at path. Its errors name the file
// and line.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("rules: %w", err)
	}
	c, err := parse(path, data)
	if err != nil {
		return nil, err
	}
	c.file = path
	return c, nil
}

// Parse parses and checks a rules file: every field and value, the limits'
// names and patterns. Its errors are [*Error]s that name the line, rule and
// field.
func Parse(data []byte) (*Config, error) {
	return parse("", data)
}
