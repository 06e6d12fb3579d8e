package rules

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// The fields of each part of a rules file, in the order the messages list
// them.
var (
	fileFields      = []string{"trusted_proxies", "client_ip_header", "trust_unix_socket", "defaults", "plans", "rules"}
	settingFields   = []string{"key", "cost", "headers", "dry_run", "on_error", "timeout", "problem_json", "deny_cache", "breaker"}
	defaultFields   = append([]string{"algorithm"}, settingFields...)
	limitFields     = []string{"name", "rate", "period", "timezone", "burst", "algorithm", "key"}
	planLimitFields = limitFields[:len(limitFields)-1] // a plan's limits take the rule's key
	ruleFields      = append(append([]string{"name", "match", "rate", "period", "timezone", "burst", "algorithm", "key", "limits", "plans"},
		settingFields[1:]...), responseFields...)
	responseFields = []string{"count", "block"} // count.go
	breakerFields  = []string{"failures", "cool_down"}
)

// place is where in the file a value is, for messages.
type place struct {
	rule  string // the rule's name
	index int    // the rule's position from 1; 0 outside rules
	field string // a prefix such as "limits[2]" or "defaults"
}

func (at place) in(field string) place {
	if at.field != "" {
		field = at.field + "." + field
	}
	at.field = field
	return at
}

// parser decodes a yaml.Node tree, so that every error has a line.
type parser struct {
	file  string
	plans planDefs // the file's plans, for its rules (plans.go)
}

func (p *parser) fail(n *yaml.Node, at place, format string, args ...any) error {
	e := &Error{File: p.file, Rule: at.rule, Index: at.index, Field: at.field, Err: fmt.Errorf(format, args...)}
	if n != nil {
		e.Line = n.Line
	}
	return e
}

// pair is a key and its value in a mapping.
type pair struct {
	name  string
	key   *yaml.Node
	value *yaml.Node
}

// fields returns the pairs of the mapping n, checking that each key is one
// of known and appears once.
func (p *parser) fields(n *yaml.Node, at place, known []string) ([]pair, error) {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		return nil, p.fail(n, at, "want fields (%s), got %s", strings.Join(known, ", "), describe(n))
	}
	var pairs []pair
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := deref(n.Content[i]), deref(n.Content[i+1])
		if k.Kind != yaml.ScalarNode || !contains(known, k.Value) {
			return nil, p.fail(k, at, "unknown field %s (fields: %s)", quoted(k), strings.Join(known, ", "))
		}
		if line, ok := seen[k.Value]; ok {
			return nil, p.fail(k, at, "field %q given twice (first on line %d)", k.Value, line)
		}
		seen[k.Value] = k.Line
		pairs = append(pairs, pair{k.Value, k, v})
	}
	return pairs, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// deref follows aliases (*anchor) to the node they name.
func deref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		return deref(n.Content[0])
	}
	return n
}

// describe names what n is, for messages: a value as written, or its kind.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "fields"
	case yaml.SequenceNode:
		return "a list"
	}
	if n.ShortTag() == "!!null" {
		return "nothing"
	}
	return quoted(n)
}

func quoted(n *yaml.Node) string {
	if n.Kind != yaml.ScalarNode {
		return describe(n)
	}
	return strconv.Quote(n.Value)
}

func (p *parser) str(n *yaml.Node, at place) (string, error) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() == "!!null" {
		return "", p.fail(n, at, "want a string, got %s", describe(n))
	}
	return n.Value, nil
}

func (p *parser) integer(n *yaml.Node, at place) (int, error) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
		return 0, p.fail(n, at, "want a whole number, got %s", describe(n))
	}
	var v int
	if err := n.Decode(&v); err != nil {
		return 0, p.fail(n, at, "%s is out of range", quoted(n))
	}
	return v, nil
}

func (p *parser) boolean(n *yaml.Node, at place) (bool, error) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" {
		return false, p.fail(n, at, "want true or false, got %s", describe(n))
	}
	var v bool
	err := n.Decode(&v)
	return v, err
}

func (p *parser) duration(n *yaml.Node, at place) (time.Duration, error) {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!int" && n.Value == "0" {
		return 0, nil
	}
	s, err := p.str(n, at)
	if err != nil {
		return 0, p.fail(n, at, "want a duration such as 500ms, 30s, 1m or 1h, got %s", describe(n))
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, p.fail(n, at, "%q is not a duration (such as 500ms, 30s, 1m or 1h)", s)
	}
	return d, nil
}

// list returns a string or a list of strings as a list.
func (p *parser) list(n *yaml.Node, at place) ([]string, error) {
	if n.Kind == yaml.ScalarNode {
		s, err := p.str(n, at)
		return []string{s}, err
	}
	if n.Kind != yaml.SequenceNode {
		return nil, p.fail(n, at, "want a string or a list of them, got %s", describe(n))
	}
	out := []string{}
	for _, item := range n.Content {
		s, err := p.str(deref(item), at)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// choice returns the value of the string n among names.
func choice[T any](p *parser, n *yaml.Node, at place, names []string, values map[string]T) (T, error) {
	var zero T
	s, err := p.str(n, at)
	if err != nil {
		return zero, err
	}
	v, ok := values[s]
	if !ok {
		return zero, p.fail(n, at, "unknown value %q (%s)", s, strings.Join(names, ", "))
	}
	return v, nil
}

// errLimit strips the package prefix from ratelimit's messages.
func errLimit(err error) string {
	return strings.TrimPrefix(err.Error(), "ratelimit: ")
}
