package rules_test

import (
	"strings"
	"testing"
	"time"
	_ "time/tzdata"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/rules"
)

func TestParseCalendarPeriods(t *testing.T) {
	c, err := rules.Parse([]byte(`
defaults:
  algorithm: sliding-window
rules:
  - name: api
    match: /api/
    limits:
      - {rate: 10, period: 1s}
      - {rate: 1000, period: day, timezone: Europe/Berlin}
      - {rate: 20000, period: month}
  - name: daily
    match: /daily/
    rate: 5
    period: day
    timezone: America/New_York
`))
	if err != nil {
		t.Fatal(err)
	}
	berlin, _ := time.LoadLocation("Europe/Berlin")
	api := c.Rules[0].Limits
	if len(api) != 3 {
		t.Fatalf("%d limits", len(api))
	}
	if l := api[1]; l.Name != "api-day" || l.Limit != ratelimit.PerDay(1000, l.Limit.Zone) || l.Limit.Zone.String() != berlin.String() {
		t.Fatalf("day limit = %+v", l)
	}
	if l := api[2]; l.Name != "api-month" || l.Limit != ratelimit.PerMonth(20000, nil) {
		t.Fatalf("month limit = %+v, want UTC", l)
	}
	if l := api[0].Limit; l.Algorithm != ratelimit.SlidingWindow {
		t.Fatalf("the defaults' algorithm is lost: %v", l)
	}
	if l := c.Rules[1].Limit; l.Calendar != ratelimit.CalendarDay || l.Zone.String() != "America/New_York" || l.Rate != 5 {
		t.Fatalf("shorthand = %v", l)
	}
}

func TestParseCalendarErrors(t *testing.T) {
	rule := func(fields string) string {
		return "rules:\n  - name: r\n    match: /\n" + fields
	}
	for _, c := range []struct{ name, yaml, want string }{
		{"unknown zone", rule("    rate: 1\n    period: day\n    timezone: Mars/Olympus\n"), `line 6: rule "r": timezone: "Mars/Olympus" is not a time zone`},
		{"the local zone", rule("    rate: 1\n    period: day\n    timezone: Local\n"), `timezone: "Local": want an IANA time zone`},
		{"a zone without a calendar", rule("    rate: 1\n    period: 1h\n    timezone: UTC\n"), `line 6: rule "r": timezone: only a period of day or month has a time zone`},
		{"a token bucket per day", rule("    rate: 1\n    period: day\n    algorithm: token-bucket\n"), `algorithm: a period of day counts in a fixed window, not the token bucket`},
		{"a burst per day", rule("    rate: 1\n    period: day\n    burst: 3\n"), `burst: only the token bucket has a burst`},
		{"a week", rule("    rate: 1\n    period: week\n"), `"week" is not a duration`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := rules.Parse([]byte(c.yaml))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Parse = %v, want %q", err, c.want)
			}
		})
	}
}
