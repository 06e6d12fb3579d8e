package ratelimit

import (
	"context"
	"testing"
	"time"
)

// TestAPassForgetsTheBookingOfItsLastUse: passes are pooled, and only a
// booking pass writes its booking; a later pass of any op must not find
// the last use's booking (WaitN would sleep its delay again).
func TestAPassForgetsTheBookingOfItsLastUse(t *testing.T) {
	l, err := New(newLocalStore(16, time.Now), PerSecond(10))
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range []op{take, book, charge, each} {
		p := l.getPass()
		p.booking, p.booked = Reservation{Tokens: 1, Delay: time.Second, At: time.Now()}, true
		p.op = op
		if err := l.setCost(1, p); err != nil {
			t.Fatal(err)
		}
		if p.booking != (Reservation{}) || p.booked {
			t.Errorf("op %d: booking %+v left from the pass's last use", op, p.booking)
		}
	}
}

// TestAnOutcomeIsThePasss: the stages answer the outcome kept in the
// pass, so a second run of one pass answers afresh, nothing left of the
// first's (a charge answers no Result: none of the denial before it).
func TestAnOutcomeIsThePasss(t *testing.T) {
	l, err := New(newLocalStore(16, time.Now), PerMinute(1))
	if err != nil {
		t.Fatal(err)
	}
	p := l.getPass()
	if err := l.keyCall(context.Background(), "k", p); err != nil {
		t.Fatal(err)
	}
	first := l.run(context.Background(), 1, p)
	if first != &p.out || !first.res.Allowed {
		t.Fatalf("first run: %+v, want allowed, in the pass", first)
	}
	second := l.run(context.Background(), 1, p)
	if second.res.Allowed || second.res.RetryAfter <= 0 {
		t.Fatalf("second run: %+v, want denied with a wait", second.res)
	}
	p.op = charge
	third := l.run(context.Background(), 1, p)
	if third.end != decided || third.res != (Result{}) || third.err != nil {
		t.Fatalf("charge: %+v, want decided and nothing else", third)
	}
}
