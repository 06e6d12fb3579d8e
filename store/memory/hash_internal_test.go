package memory

import (
	"strings"
	"testing"

	"github.com/ratelimit-go/ratelimit"
)

// TestHashJoinedIsTheJoinsHash: AllowJoined finds the bucket of the
// joined key (else it would join the key and go to AllowN, correct but no
// faster), wherever the join splits a key, around the hash's 128-byte
// blocks and the join it copies to hash (joinBuf) too.
func TestHashJoinedIsTheJoinsHash(t *testing.T) {
	s := New()
	defer s.Close()
	whole := strings.Repeat("0123456789abcdef", 20) // 320 bytes
	for _, size := range []int{0, 1, 17, 63, 64, 65, 127, 128, 129, 255, 256, 320} {
		for cut := 0; cut <= size; cut++ {
			prefix, key := whole[:cut], whole[cut:size]
			for _, a := range []ratelimit.Algorithm{ratelimit.TokenBucket, ratelimit.SlidingLog} {
				if got, want := s.hashJoined(prefix, key, a), s.hash(prefix+key, a); got != want {
					t.Fatalf("%d+%d bytes, %v: %x, want %x", len(prefix), len(key), a, got, want)
				}
			}
		}
	}
}
