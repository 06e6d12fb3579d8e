package rules

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
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

// serveCounting serves req through hits, some of whose rules count only
// some responses: each such limiter admitted req on a report (taking
// nothing), and takes its cost once the response's status is known, as
// ratelimit.Limiter.Handler does, also when a later rule denies req.
func (h *Handler) serveCounting(w http.ResponseWriter, req *http.Request, hits []hit) {
	sw := statusWriters.Get().(*statusWriter)
	sw.ResponseWriter, sw.status = w, 0
	var buf [maxHits]*http.Request
	counted := buf[:0]
	var limiters [maxHits]*entry
	returned := false
	defer func() {
		status := sw.status
		switch {
		case status != 0:
		case returned:
			status = http.StatusOK
		default: // next panicked before writing a status
			status = http.StatusInternalServerError
		}
		sw.ResponseWriter = nil
		statusWriters.Put(sw)
		for i, r := range counted {
			limiters[i].limiter.Count(r, status)
		}
	}()
	for _, hit := range hits {
		keyed := req.WithContext(req.Context())
		keyed.Pattern = hit.pattern
		if !hit.e.limiter.Admit(sw, keyed) {
			return
		}
		if hit.e.limiter.Counts() {
			limiters[len(counted)] = hit.e
			counted = append(counted, keyed)
		}
	}
	h.next.ServeHTTP(sw, req)
	returned = true
}

// statusWriter records the status of a response.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 && code >= 200 { // 1xx are not the response's status
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

var statusWriters = sync.Pool{New: func() any { return new(statusWriter) }}

// Unwrap lets http.ResponseController reach the writer underneath.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
