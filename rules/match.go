package rules

import (
	"fmt"
	"net/http"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The matcher: which rules a request may reach, whatever the router behind
// the Handler makes of its path.
//
// The rules' patterns are http.ServeMux patterns, and a request is first
// matched as ServeMux matches it: on its escaped path, cleaned (so
// "/v1//login" and "/v1/./login" match "/v1/login"), where "%2F" is no
// separator. Routers differ: gin and a switch on r.URL.Path route on the
// decoded path ("/v1%2Flogin" is "/v1/login" to them), an app may run
// path.Clean first (which also drops a trailing slash and resolves a
// decoded "%2e%2e"), and some fold case. So a request is matched under each
// of these readings of its path, and passes through the limiter of every
// distinct rule one of them matches, in that order: a path that could reach
// a rule's handler under any of them never skips its limit. The readings:
//
//  1. the path as ServeMux reads it;
//  2. the decoded path (r.URL.Path), as ServeMux would read it unescaped;
//  3. path.Clean of the decoded path;
//  4. each of them in lower case, against the patterns in lower case
//     (foldCase: as strings.ToLower and strings.EqualFold both read it).
//
// A path read one way by all of them (clean, without escapes, in the case
// of the patterns) is matched once, as before. What the matcher assumes of
// the router behind it: that it routes on one of these readings, keeps
// the method and host, and treats no other byte as a separator (a router
// that took '\' or ';' for '/' would need rules of its own).

// hit is a rule a request may reach, and the pattern its limiter sees.
type hit struct {
	e       *entry
	pattern string
}

// maxHits bounds the rules one request passes through: one per reading.
const maxHits = 6

// hits appends to buf the rules req may reach, each once.
func (set *ruleSet) hits(req *http.Request, buf []hit) []hit {
	add := func(e *entry) {
		if e == nil {
			return
		}
		for _, h := range buf {
			if h.e == e {
				return
			}
		}
		buf = append(buf, hit{e, e.rule.Match})
	}
	_, pattern := set.mux.Handler(req)
	add(set.byPattern[pattern])

	decoded := req.URL.Path
	cleaned := decoded
	if decoded != "" {
		cleaned = path.Clean(decoded)
	}
	fold := set.byFolded != nil && (set.upper || mayFold(decoded))
	if req.URL.RawPath == "" && cleaned == decoded && !fold {
		return buf // one reading: the usual request
	}
	v, u := *req, *req.URL
	v.URL = &u
	lookup := func(p, raw string) {
		u.Path, u.RawPath = p, raw
		_, pattern := set.mux.Handler(&v)
		add(set.byPattern[pattern])
	}
	lookupFolded := func(p, raw string) {
		u.Path, u.RawPath = p, raw
		_, pattern := set.folded.mux.Handler(&v)
		for _, e := range set.byFolded[pattern] {
			add(e)
		}
	}
	if req.URL.RawPath != "" {
		lookup(decoded, "")
	}
	if cleaned != decoded {
		lookup(cleaned, "")
	}
	if fold {
		folded := foldCase(decoded)
		lookupFolded(folded, foldCase(req.URL.RawPath))
		lookupFolded(folded, "")
		lookupFolded(foldCase(cleaned), "")
	}
	return buf
}

// fold registers the rules' patterns in lower case, for the readings of
// a path by routers that fold case; patterns that differ only in case
// share their folded form. It fails on patterns that conflict once folded
// (wildcards whose names differ only in case, say).
func (set *ruleSet) fold(rules []Rule) error {
	set.folded, set.byFolded = newPatterns(), map[string][]*entry{}
	for _, r := range rules {
		f := foldPattern(r.Match)
		set.upper = set.upper || f != r.Match
		if _, seen := set.byFolded[f]; !seen {
			if err := set.folded.add(f, r.Name); err != nil {
				return &Error{File: set.cfg.file, Line: r.Line, Rule: r.Name, Err: fmt.Errorf("match: in lower case, as a router that folds case reads it: %v", err)}
			}
		}
		set.byFolded[f] = append(set.byFolded[f], set.byName[r.Name])
	}
	return nil
}

// foldPattern returns pattern with its host and path in lower case (the
// method, which ServeMux compares exactly, as it is).
func foldPattern(pattern string) string {
	method, rest, found := strings.Cut(pattern, " ")
	if !found || strings.Contains(method, "/") {
		return foldCase(pattern)
	}
	return method + " " + foldCase(strings.TrimLeft(rest, " \t"))
}

// mayFold reports whether folding case may change s: it holds an ASCII
// capital or a byte of a non-ASCII letter (the Kelvin sign folds to k, 'İ'
// lowers to i).
func mayFold(s string) bool {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' || s[i] >= utf8.RuneSelf {
			return true
		}
	}
	return false
}

// foldCase is s in lower case, as both strings.ToLower and
// strings.EqualFold read it: each letter in lower case, and one whose case
// folding holds an ASCII letter (the Kelvin sign, the long s 'ſ') as that
// letter, so that a path a router takes for an ASCII pattern reads as it.
func foldCase(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return strings.Map(foldRune, s)
		}
	}
	return strings.ToLower(s) // ASCII: its fast path, 2 to 4 times foldRune's speed
}

// foldRune is r as foldCase reads it.
func foldRune(r rune) rune {
	if r >= utf8.RuneSelf {
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if f < utf8.RuneSelf {
				return unicode.ToLower(f)
			}
		}
	}
	return unicode.ToLower(r)
}
