package ratelimit_test

import (
	"context"
	"fmt"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

func ExamplePerDay() {
	// 10 per second and 1,000 per day in Berlin, all or nothing: a request
	// the day's quota denies takes nothing from the per-second budget.
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		panic(err)
	}
	store := memory.New()
	defer store.Close()
	api, err := ratelimit.New(store, ratelimit.PerSecond(10), ratelimit.WithName("api"),
		ratelimit.WithPolicy(ratelimit.Policy{Name: "daily", Limit: ratelimit.PerDay(1000, berlin)}))
	if err != nil {
		panic(err)
	}
	fmt.Println(api)
	// Output: api: 10 per 1s; daily: 1000 per day (Europe/Berlin)
}

func ExamplePerMonth() {
	store := memory.New()
	defer store.Close()
	l := ratelimit.PerMonth(20000, nil) // UTC
	res, _ := store.AllowN(context.Background(), "customer-7", l, 1)
	fmt.Println(res.Allowed, res.Remaining)
	// Output: true 19999
}

func ExampleLimit_Window() {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	l := ratelimit.PerDay(1000, berlin)
	// The last Sunday of October 2026 has 25 hours in Berlin.
	start, end := l.Window(time.Date(2026, time.October, 25, 12, 0, 0, 0, berlin))
	fmt.Println(start, "for", end.Sub(start))
	// Output: 2026-10-25 00:00:00 +0200 CEST for 25h0m0s
}

func ExampleCalendar() {
	fmt.Println(ratelimit.CalendarDay, ratelimit.CalendarMonth, ratelimit.PerDay(5, nil).Calendar)
	// Output: day month day
}

func ExampleCalendars() {
	var store ratelimit.Store = memory.New()
	c, ok := store.(ratelimit.Calendars)
	fmt.Println(ok && c.Calendars())
	// Output: true
}

func ExampleLimit_WithZone() {
	// Zones compare by name: limits made from two loads of one zone are ==.
	a, _ := time.LoadLocation("Europe/Berlin")
	b, _ := time.LoadLocation("Europe/Berlin")
	daily := ratelimit.Limit{Rate: 1000, Period: 24 * time.Hour, Algorithm: ratelimit.FixedWindow, Calendar: ratelimit.CalendarDay}
	fmt.Println(daily.WithZone(a) == ratelimit.PerDay(1000, b))
	// Output: true
}
