// Package rules builds rate limiters from a YAML file of rules, one rule
// per route, and serves through them with reloads that keep budgets:
//
//	trusted_proxies: [10.0.0.0/8]   # believe the client-address header from these
//	client_ip_header: X-Forwarded-For
//	trust_unix_socket: false
//
//	defaults:                       # every rule's, unless it says otherwise
//	  key: ip
//	  headers: both
//	  on_error: open
//	  timeout: 100ms
//
//	plans:                          # the limits of each plan, by name
//	  free:
//	    - {rate: 60, period: 1m}
//	    - {name: daily, rate: 1000, period: day, timezone: Europe/Berlin}
//	  pro:
//	    - {rate: 600, period: 1m}
//	    - {name: daily, rate: 100000, period: day, timezone: Europe/Berlin}
//
//	rules:
//	  - name: home
//	    match: "GET /{$}"           # an http.ServeMux pattern
//	    rate: 10                    # shorthand for one limit
//	    period: 1m
//	  - name: api
//	    match: "GET /api/"
//	    key: [header:X-API-Key, ip] # the API key, else the client address
//	    limits:
//	      - {rate: 100, period: 1m, burst: 20}            # named "api"
//	      - {rate: 1000, period: 1h}                      # named "api-1h"
//	      - {name: api-per-ip, rate: 200, period: 1m, key: ip}
//	    problem_json: true
//	  - name: products
//	    match: /products/
//	    key: header:X-API-Key
//	    rate: 1200                  # every plan's ceiling
//	    period: 1m
//	    plans: [free, pro]          # and the limits of the request's plan
//	  - name: login
//	    match: "POST /login"
//	    rate: 5
//	    period: 15m
//	    count: [401, 403]           # only failed logins take the budget
//	    block: 15m                  # then the address waits 15 minutes
//	  - name: account
//	    match: /account/
//	    key: user                   # the user WithUser gives; none: 401
//	    rate: 30
//	    period: 1m
//	  - name: export
//	    match: "POST /export"
//	    rate: 20
//	    period: 1h
//	    algorithm: sliding-log
//	    cost: 5
//	    on_error: closed
//	    dry_run: true
//
// # Top level
//
// trusted_proxies: addresses or prefixes of the proxies whose header the
// ip key believes (clientip.TrustProxies); none by default, so the ip key
// is the connection's address. client_ip_header: the one header they write
// the client's address to (clientip.Header); X-Forwarded-For by
// default. trust_unix_socket: treat requests over a unix socket as from a
// trusted proxy (clientip.TrustUnixSocket); false by default. defaults:
// settings of every rule (key, algorithm, cost, headers, dry_run, on_error,
// timeout, problem_json, deny_cache, breaker), each of which a rule may
// set again. plans: each plan's name (1 to 64 letters, digits, '.', '_' or
// '-') and its limits, a list of {name, rate, period, timezone, burst,
// algorithm} or one of them (see Plans below). rules: the rules, at least
// one.
//
// # Rules
//
//   - name (required): 1 to 64 letters, digits, '.', '_' or '-', unique;
//     it namespaces the rule's keys in the store and names it in headers
//     and metrics.
//   - match (required): an http.ServeMux pattern such as "GET /api/"; a
//     request goes through the limiter of the most specific rule that
//     matches it, as ServeMux would route it, or through none (but see
//     Paths below).
//   - limits: a list of {name, rate, period, timezone, burst, algorithm,
//     key}, all of which a request must pass, all or nothing (see below).
//     rate and period are required; period as in time.ParseDuration, or
//     day or month for a quota that resets at midnight (of the first of the
//     month) in timezone, an IANA name such as Europe/Berlin (UTC when
//     absent; see ratelimit.PerDay), counted in a fixed window; burst is for the
//     token bucket only (default 0, which means rate); algorithm is
//     token-bucket (the default), fixed-window, sliding-window or
//     sliding-log; key (default the rule's) keys that limit alone, such as
//     ip for a per-address ceiling over a per-API-key limit. Every limit
//     may be named. The first limit's name, the rule's name if it has none,
//     names the rule's limiter: its namespace in the store, and the limiter
//     and policy in headers and metrics; no other rule may go by it. The
//     others are named as given, else rule-period ("api-1h", "api-day"), then "-2",
//     "-3" if that is taken.
//   - rate, period, timezone, burst, algorithm: shorthand for a one-limit list; a
//     rule gives these or limits, not both.
//   - plans: the plans of the file the rule decides by, a list such as
//     [free, pro] (or one name); see Plans below.
//   - key: ip, user, route, header:NAME, or parts joined with "+" such as
//     route+ip; a list means the first the request has. Default ip. user
//     is the identity given by [WithUser]; a request without one is
//     answered 401, unless a later alternative applies. User and header
//     keys reach the store only as a keyed hash (ratelimit.WithKeySecret):
//     on a store shared by several servers, such as Redis, give them all
//     the same secret with WithLimiterOptions(ratelimit.WithKeySecret(s)).
//   - cost: tokens per request, 0 up to the smallest limit's capacity;
//     default 1.
//   - headers: x-ratelimit (the default), ietf, both or none
//     (ratelimit.WithHeaders).
//   - dry_run: decide and report, refuse nothing (ratelimit.WithDryRun);
//     default false.
//   - on_error: open (the default: a request passes when the store fails)
//     or closed (503, ratelimit.WithFailClosed).
//   - timeout: the time budget of a decision (ratelimit.WithTimeout); 0
//     turns it off; default 100 ms on stores such as
//     Redis, none on the memory store.
//   - problem_json: answer 429 with an RFC 9457 problem+json body
//     (ratelimit.WithDenyHandler(ratelimit.ProblemJSON())); default false.
//   - deny_cache: how many denied keys the limiter remembers
//     (ratelimit.WithDenyCache); 0 turns it off; default
//     65,536 on stores such as Redis, none on the
//     memory store.
//   - breaker: off, or {failures, cool_down} (ratelimit.WithBreaker;
//     defaults 5 and 500ms); default a breaker on stores such as Redis,
//     none on the memory store.
//   - count: the response status codes that take the rule's cost, a list
//     such as [401, 403] (or one code), each 100 to 599, once
//     (ratelimit.WithCountIf(ratelimit.CountStatus(...))): a request passes
//     while the key has room for its cost, and the cost is taken after the
//     response, only if its status is one of them. Default: every request
//     counts. The Handler counts after next has answered, also when a
//     later rule (another reading of the path) denied the request.
//   - block: once the rule denies a key, deny it for this long whatever
//     its budget (ratelimit.WithBlock), such as 15m; positive. Default: no
//     block.
//
// The fields count and block, like name, match, limits and plans, belong
// to a rule alone: the defaults do not take them.
//
// # Plans
//
// A rule with plans decides each request under the limits of the plan its
// context names: the app's authentication, which knows the customer,
// calls ratelimit.ContextWithPlan before the Handler; nothing the client sends
// chooses a plan. A request whose context names no plan of the rule, or
// one it does not use, is answered 500 and told to the error handler
// (an error wrapping ratelimit.ErrBadConfig), never decided under a default plan.
//
// The limits of a rule's plans pair by name, else by period ("1m", "day"),
// so every plan of a rule gives the same names (or periods): each pair is
// one policy of the rule, named as the rule's further limits are (its
// name, else rule-period, such as "products-1m"), with one
// ratelimit.Plan per plan, and shows in RateLimit-Policy as
// "policy.plan" ("products-1m.pro"). A limit every plan gives alike is a
// policy without plans; two plans of three that give one alike are an
// error, since the headers could not tell them apart. A key keeps one
// budget across plans: an upgrade raises its ceiling at once.
//
// A rule with plans has a limit of its own too (rate and period, or
// limits), which every plan shares, such as a ceiling per client: its
// limiter is named after it. The plans' limits take the rule's key and
// the defaults' algorithm, and cost may not exceed any of them.
//
// Unknown fields, bad values and conflicting patterns are errors that name
// the file, line, rule and field, such as
//
//	rules.yaml:7: rule "api": unknown field "burts" (fields: name, match, ...)
//
// # Paths
//
// The router behind the rules may read a path otherwise than ServeMux:
// gin and a switch on r.URL.Path see "/v1%2Flogin" as /v1/login, an app
// that runs path.Clean sees "/v1/login/" and "/v1/x/%2e%2e/login" as
// /v1/login, some fold case. So a request is matched under each of these
// readings (ServeMux's, the decoded path, its path.Clean, each in lower
// case) and passes through the limiter of every rule one of them matches:
// no form of a path that reaches a rule's handler skips its limit. A
// clean path without escapes, in the patterns' case, has one reading and
// one rule, as before. The matcher assumes that the router keeps the
// method and host and takes no other byte for '/' (not '\' nor ';').
//
// # All or nothing
//
// A request passes only if every limit of its rule allows it, and a denied
// request takes nothing from any of them. On the memory store that holds
// always. On a store that decides several keys in one step
// (ratelimit.MultiStore, such as Redis in one script) it holds in one round
// trip; on Redis Cluster only when the keys share a slot, which limits
// keyed by the same key do, and not for a limit with a key of its own (a
// per-address ceiling): those, like every take on a store that is not a
// MultiStore, are decided as ratelimit.AllowAll describes: one call per
// limit, and a denied request's takes refunded (Redis can), where a
// concurrent request may see them spent until then.
//
// # Reload
//
// [NewHandler] serves through an immutable set of rules that
// [Handler.Reload], [Handler.ReloadFile] or [Handler.Apply] swap
// atomically while requests are in flight. A file that does not parse or
// whose limiters do not build changes nothing: the rules in force stay
// and the error says why. A rule that keeps its name and fields keeps its
// limiter (deny cache and breaker included); every limiter's keys are
// namespaced by its name and its limits' names, so on the same store a
// rebuilt limiter keeps the budgets of the limits that kept their names,
// read under their new values (see [Handler.Apply] for what a tightened
// limit can hand back once; rename a limit to start it afresh).
// A rule's plans are its fields too: a reload that changes a plan changes
// the rules that use it, and a rule that names a plan the file lacks
// fails the reload.
// The returned [Changes] name the rules added, removed and changed:
//
//	h, err := rules.NewHandler(cfg, store, app)
//	...
//	hup := make(chan os.Signal, 1)
//	signal.Notify(hup, syscall.SIGHUP)
//	for range hup {
//		changes, err := h.ReloadFile(path)
//		if err != nil {
//			log.Printf("kept the rules in force: %v", err)
//			continue
//		}
//		log.Printf("rules reloaded: %s", changes)
//	}
package rules
