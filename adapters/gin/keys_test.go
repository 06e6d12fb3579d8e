package ginlimit_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/gin-gonic/gin"

	ginlimit "github.com/ratelimit-go/ratelimit/adapters/gin"
)

// TestKeyByClientIPGroupsIPv6ByNetwork: 20 addresses of one /64 share its
// budget, as they do under ratelimit.KeyByIP; another /64 has its own.
func TestKeyByClientIPGroupsIPv6ByNetwork(t *testing.T) {
	e := gin.New()
	if err := e.SetTrustedProxies(nil); err != nil {
		t.Fatal(err)
	}
	e.Use(ginlimit.Middleware(newLimiter(t), ginlimit.KeyByClientIP())) // 2 per hour
	e.GET("/", func(c *gin.Context) { c.String(200, "ok") })
	from := func(remote string) func(*http.Request) { return func(r *http.Request) { r.RemoteAddr = remote } }
	admitted := 0
	for i := range 20 {
		if get(e, "/", from(fmt.Sprintf("[2001:db8:1:2::%x]:443", i+1))).Code == 200 {
			admitted++
		}
	}
	if admitted != 2 {
		t.Fatalf("20 addresses of one /64: %d admitted, want 2 (one budget)", admitted)
	}
	if code := get(e, "/", from("[2001:db8:1:3::1]:443")).Code; code != 200 {
		t.Fatalf("another /64: %d, want 200", code)
	}
	if code := get(e, "/", from("[64:ff9b::102:304]:443")).Code; code != 200 {
		t.Fatalf("a NAT64 client: %d, want 200 (keyed as its IPv4 address)", code)
	}
}
