// Package rls serves Envoy's rate-limit service (RateLimitService v3)
// on the ratelimit library's engine, with envoyproxy/ratelimit's descriptor
// YAML, so that a deployment of that service can swap its image and keep
// its files and environment.
package rls

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	pb "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"gopkg.in/yaml.v3"
)

// ErrConfig is wrapped by every error of a descriptor file: a syntax
// error, an unknown key or unit, a duplicate descriptor or domain. Its
// message names the file, the line and the field.
var ErrConfig = errors.New("ratelimit: rls: bad configuration")

// File is one descriptor file to load: its name, for errors, and content.
type File struct {
	Name string // the file's path, as errors name it
	Data []byte // the file's YAML
}

// Config is a loaded set of descriptor files, read-only once made: the
// limits of each domain, looked up as envoyproxy/ratelimit looks them up.
type Config struct {
	domains map[string]*node
}

// node is one level of a domain's descriptor tree.
type node struct {
	children  map[string]*node // by "key_value" or "key"
	wildcards []string         // child keys ending in '*', in file order
	rule      *Rule
	pattern   string // share_threshold: the wildcard key this node was listed as
}

// LoadFiles makes a Config of files, in order. Two files of one domain are
// an error unless merge (MERGE_DOMAIN_CONFIG), which adds the second's
// descriptors to the first's.
func LoadFiles(files []File, merge bool) (*Config, error) {
	c := &Config{domains: map[string]*node{}}
	for _, f := range files {
		if err := c.load(f, merge); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// LoadDir makes a Config of every file under dir, recursively, in lexical
// order of their paths, as envoyproxy/ratelimit's runtime loads its app
// directory; files and directories whose name starts with '.' are skipped
// if ignoreDotFiles. A missing dir is an empty Config.
func LoadDir(dir string, merge, ignoreDotFiles bool) (*Config, error) {
	var files []File
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && path == dir {
				return fs.SkipAll
			}
			return err
		}
		if ignoreDotFiles && path != dir && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files = append(files, File{Name: path, Data: data})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("ratelimit: rls: reading %s: %w", dir, err)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	return LoadFiles(files, merge)
}

// Domains returns the names of the configured domains, sorted.
func (c *Config) Domains() []string {
	out := make([]string, 0, len(c.domains))
	for d := range c.domains {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

// yamlRoot and yamlDescriptor are the reference's file format.
type yamlRoot struct {
	Domain      string           `yaml:"domain"`
	Descriptors []yamlDescriptor `yaml:"descriptors"`
}

type yamlDescriptor struct {
	Key            string           `yaml:"key"`
	Value          string           `yaml:"value"`
	RateLimit      *yamlRateLimit   `yaml:"rate_limit"`
	Descriptors    []yamlDescriptor `yaml:"descriptors"`
	ShadowMode     bool             `yaml:"shadow_mode"`
	QuotaMode      bool             `yaml:"quota_mode"`
	DetailedMetric bool             `yaml:"detailed_metric"`
	ValueToMetric  bool             `yaml:"value_to_metric"`
	ShareThreshold bool             `yaml:"share_threshold"`
	line           int
	limitLine      int
}

type yamlRateLimit struct {
	RequestsPerUnit uint32 `yaml:"requests_per_unit"`
	Unit            string `yaml:"unit"`
	Unlimited       bool   `yaml:"unlimited"`
	Name            string `yaml:"name"`
	Replaces        []struct {
		Name string `yaml:"name"`
	} `yaml:"replaces"`
	// Extensions, under keys the reference does not use.
	Algorithm      string `yaml:"algorithm"`
	Burst          int    `yaml:"burst"`
	UnitMultiplier uint32 `yaml:"unit_multiplier"`
	Timezone       string `yaml:"timezone"`
}

// The keys a file may hold: the reference's, and this service's
// extensions inside rate_limit.
var (
	rootKeys       = set("domain", "descriptors")
	descriptorKeys = set("key", "value", "rate_limit", "descriptors", "shadow_mode", "quota_mode",
		"detailed_metric", "value_to_metric", "share_threshold")
	rateLimitKeys = set("requests_per_unit", "unit", "unlimited", "name", "replaces",
		"algorithm", "burst", "unit_multiplier", "timezone")
	replacesKeys = set("name")
)

func set(keys ...string) map[string]bool {
	m := make(map[string]bool, len(keys))
	for _, k := range keys {
		m[k] = true
	}
	return m
}

// configError is an error of file f at line, about field.
func configError(f string, line int, field, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if field != "" {
		msg = field + ": " + msg
	}
	return fmt.Errorf("%w: %s:%d: %s", ErrConfig, f, line, msg)
}

// load adds file f to c.
func (c *Config) load(f File, merge bool) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(f.Data, &doc); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrConfig, f.Name, err)
	}
	if len(doc.Content) == 0 {
		return configError(f.Name, 1, "domain", "config file cannot have empty domain")
	}
	top := doc.Content[0]
	if err := checkKeys(f.Name, top, rootKeys, ""); err != nil {
		return err
	}
	var root yamlRoot
	if err := top.Decode(&root); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrConfig, f.Name, err)
	}
	if root.Domain == "" {
		return configError(f.Name, top.Line, "domain", "config file cannot have empty domain")
	}
	setLines(top, root.Descriptors)
	d, present := c.domains[root.Domain]
	if present && !merge {
		return configError(f.Name, top.Line, "domain", "duplicate domain '%s' in config file", root.Domain)
	}
	if !present {
		d = &node{children: map[string]*node{}}
		c.domains[root.Domain] = d
	}
	return d.loadDescriptors(f.Name, root.Domain+".", root.Descriptors)
}

// checkKeys refuses a key of n unknown at its level, naming its line.
func checkKeys(file string, n *yaml.Node, keys map[string]bool, path string) error {
	if n.Kind != yaml.MappingNode {
		return configError(file, n.Line, path, "want a mapping, have %s", kindName(n))
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		field := k.Value
		if path != "" {
			field = path + "." + k.Value
		}
		if k.Kind != yaml.ScalarNode || !keys[k.Value] {
			return configError(file, k.Line, field, "unknown key '%s'", k.Value)
		}
		var sub map[string]bool
		switch k.Value {
		case "descriptors":
			sub = descriptorKeys
		case "rate_limit":
			sub = rateLimitKeys
		case "replaces":
			sub = replacesKeys
		default:
			if v.Kind != yaml.ScalarNode {
				return configError(file, v.Line, field, "want a value, have %s", kindName(v))
			}
			continue
		}
		if k.Value == "rate_limit" {
			if err := checkKeys(file, v, sub, field); err != nil {
				return err
			}
			continue
		}
		if v.Kind != yaml.SequenceNode {
			if v.Tag == "!!null" {
				continue
			}
			return configError(file, v.Line, field, "want a list, have %s", kindName(v))
		}
		for j, e := range v.Content {
			if err := checkKeys(file, e, sub, fmt.Sprintf("%s[%d]", field, j)); err != nil {
				return err
			}
		}
	}
	return nil
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	return "'" + n.Value + "'"
}

// setLines records in ds the lines of their nodes in n's "descriptors".
func setLines(n *yaml.Node, ds []yamlDescriptor) {
	list := child(n, "descriptors")
	if list == nil {
		return
	}
	for i := range ds {
		if i >= len(list.Content) {
			return
		}
		e := list.Content[i]
		ds[i].line = e.Line
		ds[i].limitLine = e.Line
		if rl := child(e, "rate_limit"); rl != nil {
			ds[i].limitLine = rl.Line
		}
		setLines(e, ds[i].Descriptors)
	}
}

// child returns the value of key in mapping n, or nil.
func child(n *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// loadDescriptors adds ds under n, parent being the full key of n.
func (n *node) loadDescriptors(file, parent string, ds []yamlDescriptor) error {
	for _, d := range ds {
		if d.Key == "" {
			return configError(file, d.line, "key", "descriptor has empty key")
		}
		final := d.Key
		if d.Value != "" {
			final += "_" + d.Value
		}
		full := parent + final
		if _, dup := n.children[final]; dup {
			return configError(file, d.line, "key", "duplicate descriptor composite key '%s'", full)
		}
		child := &node{children: map[string]*node{}}
		if d.RateLimit != nil {
			r, err := newRule(file, d)
			if err != nil {
				return err
			}
			child.rule = r
		}
		wild := strings.HasSuffix(final, "*")
		if d.ShareThreshold {
			if !wild {
				return configError(file, d.line, "share_threshold", "share_threshold can only be used with wildcard values (ending with '*'), but found key '%s'", final)
			}
			child.pattern = final
		}
		if wild {
			n.wildcards = append(n.wildcards, final)
		}
		if err := child.loadDescriptors(file, full+".", d.Descriptors); err != nil {
			return err
		}
		n.children[final] = child
	}
	return nil
}

// units are the reference's units and their fixed windows: WEEK 7 days
// from the epoch, MONTH 30 days, YEAR 365 days.
var units = map[pb.RateLimitResponse_RateLimit_Unit]time.Duration{
	pb.RateLimitResponse_RateLimit_SECOND: time.Second,
	pb.RateLimitResponse_RateLimit_MINUTE: time.Minute,
	pb.RateLimitResponse_RateLimit_HOUR:   time.Hour,
	pb.RateLimitResponse_RateLimit_DAY:    24 * time.Hour,
	pb.RateLimitResponse_RateLimit_WEEK:   7 * 24 * time.Hour,
	pb.RateLimitResponse_RateLimit_MONTH:  30 * 24 * time.Hour,
	pb.RateLimitResponse_RateLimit_YEAR:   365 * 24 * time.Hour,
}
