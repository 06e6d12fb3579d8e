package ratelimit_test

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// TestConcurrentGuessesBoundedByBudget: wrong passwords sent at once reach
// the handler at most as often as the budget allows, since each takes its
// cost before the handler (on a Local store and on one that is not).
func TestConcurrentGuessesBoundedByBudget(t *testing.T) {
	for _, remote := range []bool{false, true} {
		var store ratelimit.Store = memory.New()
		opts := []ratelimit.Option{ratelimit.WithBlock(15 * time.Minute)}
		if remote {
			store = &remoteRefunder{Store: store.(*memory.Store)}
			opts = append(opts, ratelimit.WithPlainKeys())
		}
		l := newLoginOn(t, store, opts...)
		var reached atomic.Int64
		h := l.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			reached.Add(1)
			login(w, r)
		}))
		var wg sync.WaitGroup
		start := make(chan struct{})
		for range 60 {
			wg.Go(func() {
				<-start
				h.ServeHTTP(httptest.NewRecorder(), loginRequest("victim", "guess"))
			})
		}
		close(start)
		wg.Wait()
		if n := reached.Load(); n != 5 {
			t.Errorf("remote %v: %d of 60 concurrent guesses reached the handler, want 5", remote, n)
		}
	}
}

// TestRightPasswordsAreGivenBack: a response that does not count gives
// its cost back, so any number of them leaves the whole budget to count.
func TestRightPasswordsAreGivenBack(t *testing.T) {
	l := newLogin(t)
	h := l.Handler(login)
	for i := range 20 {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, loginRequest("ann", "right"))
		if w.Code != http.StatusNoContent {
			t.Fatalf("right password %d: %d", i, w.Code)
		}
	}
	if res, _ := l.AllowN(context.Background(), "acct:ann", 0); res.Remaining != 5 {
		t.Fatalf("after 20 right passwords Remaining %d, want 5", res.Remaining)
	}
}

// TestCountedWriterKeepsInterfaces: the writer a counting limiter gives
// the handler is an http.Flusher and an http.Hijacker exactly when the
// server's writer is, and http.ResponseController reaches the server's.
func TestCountedWriterKeepsInterfaces(t *testing.T) {
	for _, tt := range []struct {
		name         string
		w            http.ResponseWriter
		flush, hijak bool
	}{
		{"plain", &headerWriter{h: http.Header{}}, false, false},
		{"flusher", &flushWriter{headerWriter{h: http.Header{}}}, true, false},
		{"hijacker", &hijackWriter{headerWriter: headerWriter{h: http.Header{}}}, false, true},
		{"both", &flushHijackWriter{hijackWriter{headerWriter: headerWriter{h: http.Header{}}}}, true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l := newLogin(t)
			var flush, hijack bool
			var enable error
			l.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, flush = w.(http.Flusher)
				_, hijack = w.(http.Hijacker)
				enable = http.NewResponseController(w).EnableFullDuplex()
			})).ServeHTTP(tt.w, loginRequest("ann", "x"))
			if flush != tt.flush || hijack != tt.hijak {
				t.Errorf("Flusher %v, Hijacker %v; want %v, %v", flush, hijack, tt.flush, tt.hijak)
			}
			if enable != nil {
				t.Errorf("ResponseController did not reach the server's writer: %v", enable)
			}
		})
	}
}

// TestHijackedResponseCounts: a handler that takes the connection over and
// writes a raw 401 is counted, unless it reports another status.
func TestHijackedResponseCounts(t *testing.T) {
	for _, tt := range []struct {
		name   string
		report int
		left   int
	}{
		{"nothing reported: counted", 0, 4},
		{"200 reported: given back", http.StatusOK, 5},
		{"401 reported: counted", http.StatusUnauthorized, 4},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l := newLogin(t)
			l.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tt.report != 0 {
					ratelimit.ReportStatus(w, tt.report)
				}
				conn, rw, err := w.(http.Hijacker).Hijack()
				if err != nil {
					t.Fatal(err)
				}
				rw.WriteString("HTTP/1.1 401 Unauthorized\r\n\r\n")
				conn.Close()
			})).ServeHTTP(&hijackWriter{headerWriter: headerWriter{h: http.Header{}}}, loginRequest("ann", "x"))
			if res, _ := l.AllowN(context.Background(), "acct:ann", 0); res.Remaining != tt.left {
				t.Fatalf("Remaining %d, want %d", res.Remaining, tt.left)
			}
		})
	}
}

// hijackWriter is a ResponseWriter whose connection a handler can take.
type hijackWriter struct{ headerWriter }

// EnableFullDuplex lets a test see http.ResponseController reach it.
func (*headerWriter) EnableFullDuplex() error { return nil }

type flushWriter struct{ headerWriter }

func (*flushWriter) Flush() {}

func (w *hijackWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, other := net.Pipe()
	go func() {
		buf := make([]byte, 512)
		for {
			if _, err := other.Read(buf); err != nil {
				return
			}
		}
	}()
	return c, bufio.NewReadWriter(bufio.NewReader(c), bufio.NewWriter(c)), nil
}

type flushHijackWriter struct{ hijackWriter }

func (w *flushHijackWriter) Flush() {}

// remoteRefunder is a memory store that says it is not Local, so that the
// limiter gives it a time budget, a breaker and a deny cache.
type remoteRefunder struct{ *memory.Store }

func (remoteRefunder) Local() bool { return false }

func newLoginOn(t *testing.T, store ratelimit.Store, opts ...ratelimit.Option) *ratelimit.Limiter {
	t.Helper()
	account := func(r *http.Request) (string, error) { return "acct:" + r.FormValue("account"), nil }
	l, err := ratelimit.New(store, ratelimit.PerHour(5), append([]ratelimit.Option{ratelimit.WithName("login"),
		ratelimit.WithKeyFunc(account), ratelimit.WithCountIf(ratelimit.CountStatus(401, 403)),
		ratelimit.WithTimeout(time.Minute)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestCountedRequestAllocatesNothing: on the memory store, a counted
// request allocates nothing, whether its cost is kept or given back.
func TestCountedRequestAllocatesNothing(t *testing.T) {
	skipUnderRace(t)
	var now atomic.Int64
	store := memory.New(memory.WithClock(func() time.Time { return time.Unix(0, now.Add(int64(time.Second))) }))
	defer store.Close()
	l, err := ratelimit.New(store, ratelimit.PerMinute(60), ratelimit.WithCountIf(ratelimit.CountStatus(401)),
		ratelimit.WithKeyFunc(func(*http.Request) (string, error) { return "k", nil }))
	if err != nil {
		t.Fatal(err)
	}
	for _, code := range []int{http.StatusUnauthorized, http.StatusOK} {
		h := l.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(code) }))
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		w := &headerWriter{h: http.Header{}}
		h.ServeHTTP(w, r)
		if a := testing.AllocsPerRun(1000, func() { clear(w.h); h.ServeHTTP(w, r) }); a != 0 {
			t.Errorf("a %d response: %v allocations per request, want 0", code, a)
		}
	}
}
