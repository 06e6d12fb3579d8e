package rules

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/clientip"
	"github.com/ratelimit-go/ratelimit/internal/headername"
)

// keyParts are the parts a key may join, for messages.
const keyParts = "ip, user, route, header:NAME, or parts joined with + such as route+ip"

// key parses a key: one alternative or a list, the first the request has.
func (p *parser) key(n *yaml.Node, at place) ([]string, error) {
	alts, err := p.list(n, at)
	if err != nil {
		return nil, err
	}
	if len(alts) == 0 {
		return nil, p.fail(n, at, "want a key (%s)", keyParts)
	}
	for _, alt := range alts {
		for _, part := range strings.Split(alt, "+") {
			if err := checkPart(strings.TrimSpace(part)); err != nil {
				return nil, p.fail(n, at, "%v", err)
			}
		}
	}
	return alts, nil
}

func checkPart(part string) error {
	switch name, ok := strings.CutPrefix(part, "header:"); {
	case part == "ip", part == "route", part == "user":
		return nil
	case ok && headername.Valid(name):
		return nil
	}
	return fmt.Errorf("unknown key %q (%s)", part, keyParts)
}

// keys builds KeyFuncs from key lists, with the settings of one config.
type keys struct {
	ip   []clientip.Option
	user func(*http.Request) (string, bool)
}

func (c *Config) keys(user func(*http.Request) (string, bool)) keys {
	k := keys{user: user}
	if len(c.TrustedProxies) > 0 {
		k.ip = append(k.ip, clientip.TrustProxies(c.TrustedProxies...))
	}
	if c.ClientIPHeader != "" {
		k.ip = append(k.ip, clientip.Header(c.ClientIPHeader))
	}
	if c.TrustUnixSocket {
		k.ip = append(k.ip, clientip.TrustUnixSocket())
	}
	return k
}

// errNoUser is the error of a rule keyed by user without WithUser.
var errNoUser = errors.New("key user: no user function: build the handler with rules.WithUser")

// missingUser is the error of a request without a user.
var missingUser = &ratelimit.MissingKeyError{What: "user", Status: http.StatusUnauthorized}

// keyFunc builds the KeyFunc of a key list: the first alternative the
// request has, each the parts joined.
func (k keys) keyFunc(alternatives []string) (ratelimit.KeyFunc, error) {
	var first []ratelimit.KeyFunc
	for _, alt := range alternatives {
		var parts []ratelimit.KeyFunc
		for _, part := range strings.Split(alt, "+") {
			part = strings.TrimSpace(part)
			if err := checkPart(part); err != nil {
				return nil, err
			}
			switch name, _ := strings.CutPrefix(part, "header:"); part {
			case "ip":
				parts = append(parts, ratelimit.KeyByIP(k.ip...))
			case "route":
				parts = append(parts, ratelimit.KeyByRoute())
			case "user":
				if k.user == nil {
					return nil, errNoUser
				}
				parts = append(parts, keyByUser(k.user))
			default:
				parts = append(parts, ratelimit.KeyByHeader(name))
			}
		}
		if len(parts) == 1 {
			first = append(first, parts[0])
		} else {
			first = append(first, ratelimit.Compose(parts...))
		}
	}
	if len(first) == 1 {
		return first[0], nil
	}
	return ratelimit.FirstOf(first...), nil
}

// keyByUser keys by the user f says the request is from: "user:" + id,
// as ratelimit.KeyByContext does; none is a 401.
func keyByUser(f func(*http.Request) (string, bool)) ratelimit.KeyFunc {
	return func(r *http.Request) (string, error) {
		id, ok := f(r)
		if !ok || id == "" {
			return "", missingUser
		}
		return "user:" + id, nil
	}
}

// usesIP reports whether a key list reads the client address.
func usesIP(alternatives []string) bool {
	for _, alt := range alternatives {
		for _, part := range strings.Split(alt, "+") {
			if strings.TrimSpace(part) == "ip" {
				return true
			}
		}
	}
	return false
}
