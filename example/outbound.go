package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/inflight"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// The example's two uses beyond limiting clients: a slow route whose
// concurrency is limited (in-flight), and calls out to a third party's API
// kept within its budget (outbound, with -outbound).

// slotsFor returns the slot store of the in-flight route: the store itself
// when it keeps slots (Redis, whose leases outlive a crashed server), else
// slots in this process.
func slotsFor(store ratelimit.Store) inflight.Store {
	if s, ok := store.(inflight.Store); ok {
		return s
	}
	return memory.NewSlots()
}

// reportRoute is GET /report: a slow report, at most 2 running at once per
// address, each taking d unless the client goes away first.
func reportRoute(store ratelimit.Store, d time.Duration, opts ...inflight.Option) (http.Handler, error) {
	reports, err := inflight.New(slotsFor(store), 2, append(opts, inflight.WithName("report"))...)
	if err != nil {
		return nil, err
	}
	return reports.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(d):
			fmt.Fprintln(w, "report ready")
		case <-r.Context().Done():
		}
	})), nil
}

// stubAPIName names the stub API's budget. Each instance starts its stub
// on a port of its own, but they all stand for one third party, whose
// budget every instance shares: the key is the API's name, not its
// address (which Transport's default key, the host, would be).
const stubAPIName = "stub-api"

// outboundClient returns a client whose calls to the stub API keep to
// limit, a budget kept in store under the API's name.
func outboundClient(store ratelimit.Store, limit ratelimit.Limit) (*http.Client, error) {
	// The budget's key is the API's name, not a client's: plain keys.
	budget, err := ratelimit.New(store, limit, ratelimit.WithName("partner-api"), ratelimit.WithPlainKeys())
	if err != nil {
		return nil, err
	}
	tr := &ratelimit.Transport{Limiter: budget, Key: func(*http.Request) string { return stubAPIName }}
	return &http.Client{Transport: tr, Timeout: time.Minute}, nil
}

// outbound calls a stub third-party API, started on a loopback port, calls
// times through a Transport whose budget, limit, lives in store: with
// Redis, every instance running the demo shares it. It writes each call's
// time and status to out.
func outbound(store ratelimit.Store, limit ratelimit.Limit, calls int, out io.Writer) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	stub := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, `{"ok":true}`)
	}), ReadHeaderTimeout: 5 * time.Second}
	go stub.Serve(ln)
	defer stub.Close()

	client, err := outboundClient(store, limit)
	if err != nil {
		return err
	}
	start := time.Now()
	for i := range calls {
		req, _ := http.NewRequestWithContext(context.Background(), "GET", "http://"+ln.Addr().String()+"/v1/things", nil)
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		fmt.Fprintf(out, "call %d at %v: %s\n", i+1, time.Since(start).Round(10*time.Millisecond), resp.Status)
	}
	return nil
}
