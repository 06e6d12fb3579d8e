package rules_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/rules"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// docSample returns the rules file of the package doc.
func docSample(t testing.TB) string {
	t.Helper()
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, line := range strings.Split(string(src), "\n") {
		if strings.HasPrefix(line, "// # ") {
			break
		}
		if s, ok := strings.CutPrefix(line, "//\t"); ok {
			b.WriteString(s + "\n")
		}
	}
	return b.String()
}

// TestDocSample: the package doc's file parses, and builds.
func TestDocSample(t *testing.T) {
	c, err := rules.Parse([]byte(docSample(t)))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Rules) != 6 || len(c.Plans) != 2 {
		t.Fatalf("%d rules, %d plans", len(c.Rules), len(c.Plans))
	}
	store := memory.New()
	defer store.Close()
	if _, err := rules.NewHandler(c, store, http.NotFoundHandler(), rules.WithUser(userOf)); err != nil {
		t.Fatal(err)
	}
}

var wildcard = regexp.MustCompile(`\{[^}]*\}`)

// FuzzParse: no file makes Parse panic, and a file it accepts builds its
// limiters and serves a request.
func FuzzParse(f *testing.F) {
	f.Add(docSample(f))
	f.Add(sample)
	f.Add(planned)
	f.Add("plans:\n  free: [{rate: 1, period: 1s}, {rate: 9, period: 1h}]\n  pro: [{rate: 5, period: 1s}, {rate: 9, period: 1h}]\nrules:\n  - {name: r, match: /, rate: 9, period: 1s, plans: [free, pro], cost: 1}\n")
	f.Add("rules:\n  - {name: login, match: \"POST /login\", rate: 2, period: 1s, count: [401, 403], block: 15m}\n")
	f.Add("rules:\n  - {name: d, match: /d, rate: 5, period: day, timezone: Europe/Berlin}\n")
	store := memory.New()
	defer store.Close()
	f.Fuzz(func(t *testing.T, file string) {
		c, err := rules.Parse([]byte(file))
		if err != nil {
			return
		}
		h, err := rules.NewHandler(c, store, http.NotFoundHandler(), rules.WithUser(userOf))
		if err != nil {
			t.Fatalf("Parse accepted a file whose limiters do not build: %v\n%s", err, file)
		}
		for _, r := range c.Rules {
			_ = r.String()
			path := r.Match // a path the rule matches, roughly
			if i := strings.Index(path, "/"); i >= 0 {
				path = wildcard.ReplaceAllString(path[i:], "x")
			}
			req, err := http.NewRequest("GET", "http://example.com"+path, nil)
			if err != nil {
				continue
			}
			req.RemoteAddr = "192.0.2.1:1234"
			if len(r.Plans) > 0 {
				req = req.WithContext(ratelimit.ContextWithPlan(req.Context(), r.Plans[0].Name))
			}
			h.ServeHTTP(httptest.NewRecorder(), req)
		}
	})
}
