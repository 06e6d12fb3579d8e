package clientip_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/clientip"
)

// Behind a proxy that writes RFC 7239 Forwarded, name that header: the
// X-Forwarded-For the client wrote itself is then never read.
func ExampleHeader() {
	key := ratelimit.KeyByIP(
		clientip.TrustProxies(netip.MustParsePrefix("10.0.0.0/8")),
		clientip.Header("Forwarded"),
	)
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "10.0.0.5:4711"               // the proxy
	r.Header.Set("X-Forwarded-For", "192.0.2.1") // the client's own
	r.Header.Set("Forwarded", `for="[2001:db8:cafe::17]:4711";proto=https`)
	k, _ := key(r)
	fmt.Println(k)
	// Output: ip:2001:db8:cafe::/64
}

// A single-address header such as X-Real-IP: if the proxy appends its
// value to the client's copy, the proxy's, the last, is used.
func ExampleHeader_xRealIP() {
	key := ratelimit.KeyByIP(
		clientip.TrustProxies(netip.MustParsePrefix("10.0.0.0/8")),
		clientip.Header("X-Real-IP"),
	)
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "10.0.0.5:4711"
	r.Header.Add("X-Real-IP", "192.0.2.1")    // the client's own
	r.Header.Add("X-Real-IP", "198.51.100.7") // the proxy's
	k, _ := key(r)
	fmt.Println(k)
	// Output: ip:198.51.100.7
}

// Behind nginx on a unix socket (proxy_pass http://unix:/run/app.sock),
// requests have no address of their own: trust the socket and read the
// client from X-Forwarded-For.
func ExampleTrustUnixSocket() {
	dir, err := os.MkdirTemp("", "ratelimit")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "app.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		panic(err)
	}
	key := ratelimit.KeyByIP(clientip.TrustUnixSocket())
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k, _ := key(r)
		io.WriteString(w, k)
	})}
	go srv.Serve(ln)
	defer srv.Close()

	// What nginx sends, with proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for.
	nginx := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		},
	}}
	req, _ := http.NewRequest("GET", "http://app/", nil)
	req.Header.Set("X-Forwarded-For", "192.0.2.1, 198.51.100.7")
	resp, err := nginx.Do(req)
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(string(body))
	// Output: ip:198.51.100.7
}
