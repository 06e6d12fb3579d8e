package rules

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/internal/status"
)

// Response predicates: a rule's count ([401, 403]) takes its cost only for
// responses of those status codes (ratelimit.WithCountIf), and its block
// (15m) keeps a key denied for that long once the rule denies it
// (ratelimit.WithBlock): five failed logins, then a quarter of an hour.

// response parses a rule's count or block.
func (p *parser) response(r *Rule, f pair, at place) error {
	var err error
	switch f.name {
	case "count":
		r.Count, err = p.statuses(f.value, at)
	case "block":
		if r.Block, err = p.duration(f.value, at); err == nil && r.Block <= 0 {
			err = p.fail(f.value, at, "want a positive duration such as 15m, got %v", r.Block)
		}
	}
	return err
}

// statuses parses a status code or a list of them: each 100 to 599, once.
func (p *parser) statuses(n *yaml.Node, at place) ([]int, error) {
	items := []*yaml.Node{n}
	if n.Kind == yaml.SequenceNode {
		items = n.Content
	}
	if len(items) == 0 {
		return nil, p.fail(n, at, "no status codes: want a list such as [401, 403]")
	}
	var codes []int
	for _, item := range items {
		item = deref(item)
		if item.Kind != yaml.ScalarNode || item.ShortTag() != "!!int" {
			return nil, p.fail(item, at, "want a status code such as 401, or a list of them, got %s", describe(item))
		}
		code, err := strconv.Atoi(item.Value)
		if err != nil || !validStatus(code) {
			return nil, p.fail(item, at, "%s is not an HTTP status code (100 to 599)", item.Value)
		}
		if slices.Contains(codes, code) {
			return nil, p.fail(item, at, "%d given twice", code)
		}
		codes = append(codes, code)
	}
	return codes, nil
}

func validStatus(code int) bool { return code >= 100 && code <= 599 }

// checkResponse checks the Count and Block of a rule built by hand.
func (r Rule) checkResponse() error {
	for i, code := range r.Count {
		if !validStatus(code) {
			return fmt.Errorf("count: %d is not an HTTP status code (100 to 599)", code)
		}
		if slices.Contains(r.Count[:i], code) {
			return fmt.Errorf("count: %d given twice", code)
		}
	}
	if r.Block < 0 {
		return fmt.Errorf("block: %v is negative", r.Block)
	}
	return nil
}

// describeResponse describes Count and Block for Rule.String, such as
// "counts 401, 403", "blocks 15m".
func (r Rule) describeResponse() []string {
	var out []string
	if len(r.Count) > 0 {
		codes := make([]string, len(r.Count))
		for i, c := range r.Count {
			codes[i] = strconv.Itoa(c)
		}
		out = append(out, "counts "+strings.Join(codes, ", "))
	}
	if r.Block > 0 {
		out = append(out, "blocks "+formatPeriod(r.Block))
	}
	return out
}

// settling holds the admissions of a request that rules counting only
// some responses admitted: each took its cost before next, as
// ratelimit.Limiter.Handler does, and settles it once the response's
// status is known, also when a later rule denies the request.
type settling struct {
	sw       *status.Writer
	admitted [maxHits]*ratelimit.Admission
	n        int
	returned bool // the handler (or a limiter's denial) returned
}

// add keeps a, and returns the writer to answer through from now on: one
// that records the response's status, over w.
func (s *settling) add(a *ratelimit.Admission, w http.ResponseWriter) http.ResponseWriter {
	s.admitted[s.n] = a
	s.n++
	if s.sw == nil {
		var rw http.ResponseWriter
		s.sw, rw = status.Get(w)
		return rw
	}
	return s.sw.Writer()
}

// done settles every admission with the response's status: 500 if the
// handler panicked before writing one.
func (s *settling) done() {
	if s.sw == nil {
		return
	}
	code := s.sw.Status(s.returned)
	status.Put(s.sw)
	for _, a := range s.admitted[:s.n] {
		a.Done(code)
	}
}
