package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/ratelimit-go/ratelimit/internal/slots"
)

// The pass of a request through an in-flight limit: skip → key → slot,
// taken within the time budget and behind the breaker (guard.go) →
// failure policy → headers → denial, or next with the slot, given back
// when it returns.

// Handler returns next wrapped in the limit: next runs only with a slot of
// its key, given back when next returns or panics. The headers say the
// limit (X-RateLimit-Limit) and the slots left (X-RateLimit-Remaining); a
// request without a slot gets 429 with a Retry-After of about how long
// the key's requests run (a moving average, at least 1 s), or runs without
// one in dry run.
//
// The slot is asked for within the time budget, behind the breaker. A
// store that fails, does not answer in time or whose breaker is open lets
// the request run without a slot, or answers 503 with [WithFailClosed]. A
// client that went away is never served, nor a request whose own deadline
// passed before the store answered (503). A slot nobody uses is given back:
// one the store grants after the budget (by the goroutine that read the
// answer), one an Acquire that failed may have taken (a store that names
// it, such as store/redis), one granted to a request that ended.
func (f *inFlight) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f.skip != nil && f.skip(r) {
			next.ServeHTTP(w, r)
			return
		}
		key, err := requestKey(f.keyFunc, r)
		if err != nil {
			writeKeyError(w, err)
			return
		}
		sk, err := f.storeKey(key)
		if err != nil { // errNoKeySecret: a key function of an adapter's, on a shared store
			f.onError(r, err)
			http.Error(w, http.StatusText(http.StatusInternalServerError), http.StatusInternalServerError)
			return
		}
		start := time.Now()
		slot, end, err := f.acquire(r, sk)
		latency := time.Since(start)
		switch end {
		case requestEnded: // neither served nor told, as a Limiter's (pass_record.go)
			if !errors.Is(r.Context().Err(), context.Canceled) { // its own deadline: its caller may wait
				http.Error(w, http.StatusText(http.StatusServiceUnavailable), http.StatusServiceUnavailable)
			}
			return
		case refused:
			f.told(r, key, slots.Slot{}, err, latency)
			f.onError(r, err)
			http.Error(w, http.StatusText(http.StatusInternalServerError), http.StatusInternalServerError)
			return
		}
		f.told(r, key, slot, err, latency)
		if end != answered {
			f.onError(r, err)
			if f.closed {
				http.Error(w, http.StatusText(http.StatusServiceUnavailable), http.StatusServiceUnavailable)
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		h := w.Header()
		h.Set(headerLimit, strconv.Itoa(f.max))
		h.Set(headerRemaining, strconv.Itoa(max(0, f.max-slot.Running)))
		if !slot.Acquired {
			if f.dryRun {
				f.logWouldDeny(r)
				next.ServeHTTP(w, r)
				return
			}
			h.Set(headerRetryAfter, strconv.FormatInt(f.retryAfter(), 10))
			if f.deny != nil {
				f.deny.ServeHTTP(w, r)
				return
			}
			http.Error(w, http.StatusText(http.StatusTooManyRequests), http.StatusTooManyRequests)
			return
		}
		stop := f.keepAlive(r, sk, slot)
		defer func() {
			stop()
			f.release(r, sk, slot)
			f.ran(time.Since(start))
		}()
		next.ServeHTTP(w, r)
	})
}

// acquire asks the store for a slot of sk for r, within the time budget
// and behind the breaker, and says how the call ended. Only an answered
// call returns a slot: every other slot the call took is given back.
func (f *inFlight) acquire(r *http.Request, sk string) (slots.Slot, callEnd, error) {
	ctx := r.Context()
	if err := ctx.Err(); err != nil {
		return slots.Slot{}, requestEnded, err // ended before the store was asked
	}
	probe, err := f.enter()
	if err != nil {
		return slots.Slot{}, storeFailed, err
	}
	callCtx := callContext(ctx, probe) // guard.go
	slot, err := withinOr(callCtx, f.budget, func(ctx context.Context) (slots.Slot, error) {
		return f.store.Acquire(ctx, sk, f.max, f.lease)
	}, func(late slots.Slot, err error) { f.giveBack(r, sk, late, err) })
	end := f.settle(ctx, err, probe)
	switch {
	case end != answered:
		if slot.ID != "" { // a failed Acquire that may have taken it
			go f.giveBack(r, sk, slot, err)
		}
		return slots.Slot{}, end, err
	case ownEnd(ctx): // the request ended as the store answered
		if slot.Acquired {
			f.release(r, sk, slot)
		}
		return slots.Slot{}, requestEnded, ctx.Err()
	}
	return slot, answered, nil
}

// giveBack releases slot, the answer (with err) of an Acquire that nobody
// uses, on the goroutine that read it: the store granted it after the time
// budget, or failed after it may have taken it. A Release that fails is
// tried again, a little later each time, until one is answered or a lease
// has passed, after which the slot lapses anyway: a store that stalled
// runs the Acquires waiting in its buffers as it wakes, and a client whose
// own timeouts are shorter than the stall (a read timeout of 100 ms) fails
// every Release sent during it. Releases are idempotent (store/redis
// remembers an ID released before its Acquire ran).
func (f *inFlight) giveBack(r *http.Request, sk string, slot slots.Slot, err error) {
	if !slot.Acquired && (err == nil || slot.ID == "") {
		return // nothing taken
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), f.lease)
	defer cancel()
	t := time.NewTimer(0)
	defer t.Stop()
	for wait := 10 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		select {
		case <-ctx.Done():
			f.onError(r, fmt.Errorf("ratelimit: in-flight slot not given back, it lapses with its lease: %w", err))
			return
		case <-t.C:
		}
		if err = f.store.Release(ctx, sk, slot); err == nil {
			return
		}
		t.Reset(wait)
	}
}

// release gives back r's slot within the time budget; a release that
// fails or does not answer in time counts against the breaker and is
// tried again in the background (giveBack).
func (f *inFlight) release(r *http.Request, sk string, slot slots.Slot) {
	ctx := context.WithoutCancel(r.Context())
	_, err := withinOr(ctx, f.budget, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, f.store.Release(ctx, sk, slot)
	}, nil)
	if f.settle(ctx, err, false) != answered {
		go f.giveBack(r, sk, slot, err)
	}
}

// renew holds slot for a lease more, within the time budget and behind
// the breaker. A slot the store says it lost (slots.ErrLost: a store
// restarted without its data) is the store's answer, and so no failure
// of the breaker's, but an error all the same.
func (f *inFlight) renew(ctx context.Context, sk string, slot slots.Slot) error {
	probe, err := f.enter()
	if err != nil {
		return fmt.Errorf("ratelimit: in-flight slot not renewed: %w", err)
	}
	_, err = withinOr(ctx, f.budget, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, f.store.Renew(ctx, sk, slot, f.lease)
	}, nil)
	lost := errors.Is(err, slots.ErrLost)
	if lost {
		f.settle(ctx, nil, probe)
	} else if f.settle(ctx, err, probe) == answered {
		return nil
	}
	return fmt.Errorf("ratelimit: in-flight slot not renewed: %w", err)
}

// keepAlive renews slot every third of the lease until stop is called; a
// renewal that fails is told to the error handler, and the request runs
// on (its slot may lapse, and another request take it); once the store
// says the slot is lost, it renews it no more.
func (f *inFlight) keepAlive(r *http.Request, sk string, slot slots.Slot) (stop func()) {
	if f.local {
		return func() {} // a process's own slots die with it: no lease to renew
	}
	ctx := context.WithoutCancel(r.Context())
	done := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		t := time.NewTicker(f.lease / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if err := f.renew(ctx, sk, slot); err != nil {
					f.onError(r, err)
					if errors.Is(err, slots.ErrLost) {
						return
					}
				}
			}
		}
	}()
	return func() { close(done); <-ended }
}
