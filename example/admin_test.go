package main

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
)

// TestAdminResetWantsTheToken: /admin/reset answers only the token from
// RATELIMIT_ADMIN_TOKEN, whatever address or forwarding header a request
// brings (a proxy on the loopback interface makes every request come from
// 127.0.0.1), with the built-in routes and with rules.yaml; without a
// token configured it refuses every request.
func TestAdminResetWantsTheToken(t *testing.T) {
	for _, file := range []string{"", "rules.yaml"} {
		for _, tt := range []struct {
			name       string
			configured string // RATELIMIT_ADMIN_TOKEN
			remote     string
			header     map[string]string
			want       int
		}{
			{"the token", testToken, "203.0.113.9:1", map[string]string{"Authorization": "Bearer " + testToken}, 200},
			{"no token, from loopback", testToken, "127.0.0.1:1", nil, 403},
			{"no token, through a local proxy with a forged X-Forwarded-For", testToken, "127.0.0.9:1", map[string]string{"X-Forwarded-For": "127.0.0.1"}, 403},
			{"a wrong token", testToken, "127.0.0.1:1", map[string]string{"Authorization": "Bearer " + testToken + "x"}, 403},
			{"the token without Bearer", testToken, "127.0.0.1:1", map[string]string{"Authorization": testToken}, 403},
			{"an empty token, none configured", "", "127.0.0.1:1", map[string]string{"Authorization": "Bearer "}, 403},
		} {
			t.Run("rules "+file+": "+tt.name, func(t *testing.T) {
				s, err := app(config{store: frozenStore(t), rulesFile: file, adminToken: tt.configured})
				if err != nil {
					t.Fatal(err)
				}
				r := httptest.NewRequest("POST", "/admin/reset?api_key=k1", nil)
				r.RemoteAddr = tt.remote
				for k, v := range tt.header {
					r.Header.Set(k, v)
				}
				w := httptest.NewRecorder()
				s.handler.ServeHTTP(w, r)
				if w.Code != tt.want {
					t.Errorf("%d, want %d: %s", w.Code, tt.want, w.Body)
				}
			})
		}
	}
}

// TestTrustedProxiesKeyEveryRoute: behind a proxy named by
// -trusted-proxies, two clients keep budgets of their own on every limited
// route; without the flag they share the proxy's; and a client that is no
// proxy cannot choose its address with X-Forwarded-For.
func TestTrustedProxiesKeyEveryRoute(t *testing.T) {
	proxies, err := parseProxies("10.0.0.0/8, 192.0.2.1")
	if err != nil {
		t.Fatal(err)
	}
	want := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.0.2.1/32")}
	if len(proxies) != 2 || proxies[0] != want[0] || proxies[1] != want[1] {
		t.Fatalf("parseProxies: %v, want %v", proxies, want)
	}
	if _, err := parseProxies("10.0.0.0/8,example.com"); err == nil {
		t.Fatal("parseProxies took a host name")
	}
	routes := []struct {
		method, path string
		budget       int // requests a client gets
	}{
		{"GET", "/", 10},
		{"GET", "/export", 4},
		{"GET", "/api/items", 60}, // no API key: the free plan per address
		{"POST", "/login?account=ann&password=guess", 5},
	}
	for _, file := range []string{"", "rules.yaml"} {
		for _, tt := range []struct {
			name    string
			trusted []netip.Prefix
			remote  string // of both clients' requests
			second  int    // what the second client gets after the first spent its budget
		}{
			{"behind a trusted proxy", proxies, "10.1.2.3:1", 1},
			{"behind a proxy not named", nil, "10.1.2.3:1", 0},
			{"a client forging X-Forwarded-For", proxies, "203.0.113.5:1", 0},
		} {
			t.Run("rules "+file+": "+tt.name, func(t *testing.T) {
				s, err := app(config{store: frozenStore(t), rulesFile: file, trusted: tt.trusted})
				if err != nil {
					t.Fatal(err)
				}
				for _, rt := range routes {
					send := func(client string) int {
						r := httptest.NewRequest(rt.method, rt.path, nil)
						r.RemoteAddr = tt.remote
						r.Header.Set("X-Forwarded-For", client)
						w := httptest.NewRecorder()
						s.handler.ServeHTTP(w, r)
						return w.Code
					}
					for range rt.budget {
						send("198.51.100.1")
					}
					if c := send("198.51.100.1"); c != http.StatusTooManyRequests {
						t.Fatalf("%s %s: the first client past its budget: %d, want 429", rt.method, rt.path, c)
					}
					got := 0
					if c := send("198.51.100.2"); c != http.StatusTooManyRequests {
						got = 1
					}
					if got != tt.second {
						t.Errorf("%s %s: the second client served %d of 1, want %d", rt.method, rt.path, got, tt.second)
					}
				}
			})
		}
	}
}

// TestAdminResetWithoutAddressSaysWhatStays: ?account= alone resets the
// account's own budget and says that its blocks per address stay (a
// blocked login stays blocked), or with rules.yaml, which limits logins
// per account and address only, asks for address=; with address= the
// block is lifted.
func TestAdminResetWithoutAddressSaysWhatStays(t *testing.T) {
	for _, file := range []string{"", "rules.yaml"} {
		t.Run("rules "+file, func(t *testing.T) {
			s, err := app(config{store: frozenStore(t), rulesFile: file, adminToken: testToken})
			if err != nil {
				t.Fatal(err)
			}
			serve := func(method, target string) *httptest.ResponseRecorder {
				r := httptest.NewRequest(method, target, nil)
				r.RemoteAddr = "192.0.2.7:1"
				r.Header.Set("Authorization", "Bearer "+testToken)
				w := httptest.NewRecorder()
				s.handler.ServeHTTP(w, r)
				return w
			}
			login := func() int { return serve("POST", "/login?account=hank&password=guess").Code }
			for login() != http.StatusTooManyRequests {
			}
			// the built-in /login has a budget per account too; rules.yaml's
			// has only its limit per account and address
			want, says := http.StatusOK, "blocks per address stay"
			if file != "" {
				want, says = http.StatusBadRequest, "want address= too"
			}
			if w := serve("POST", "/admin/reset?account=hank"); w.Code != want || !strings.Contains(w.Body.String(), says) {
				t.Fatalf("reset without address: %d %q, want %d saying %q", w.Code, w.Body, want, says)
			}
			if c := login(); c != http.StatusTooManyRequests {
				t.Fatalf("a login after a reset without address: %d, want 429 (blocked from its address)", c)
			}
			if w := serve("POST", "/admin/reset?account=hank&address=192.0.2.7"); w.Code != http.StatusOK || w.Body.String() != "reset\n" {
				t.Fatalf("reset with address: %d %q, want 200 reset", w.Code, w.Body)
			}
			if c := login(); c != http.StatusUnauthorized {
				t.Fatalf("a login after a reset with address: %d, want 401 (served)", c)
			}
		})
	}
}

// TestLoginTakesAMultipartForm: a login sent as multipart/form-data is read
// as a URL-encoded one, with the built-in routes and with rules.yaml (whose
// key read the account from the form before the handler could).
func TestLoginTakesAMultipartForm(t *testing.T) {
	for _, file := range []string{"", "rules.yaml"} {
		t.Run("rules "+file, func(t *testing.T) {
			s, err := app(config{store: frozenStore(t), rulesFile: file})
			if err != nil {
				t.Fatal(err)
			}
			for password, want := range map[string]int{"correct-horse": http.StatusOK, "guess": http.StatusUnauthorized} {
				var body bytes.Buffer
				mw := multipart.NewWriter(&body)
				mw.WriteField("account", "ann")
				mw.WriteField("password", password)
				mw.Close()
				r := httptest.NewRequest("POST", "/login", &body)
				r.Header.Set("Content-Type", mw.FormDataContentType())
				w := httptest.NewRecorder()
				s.handler.ServeHTTP(w, r)
				if w.Code != want {
					t.Errorf("password %s: %d %q, want %d", password, w.Code, w.Body, want)
				}
			}
		})
	}
}
