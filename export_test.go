package ratelimit

// DenyCacheLen returns how many denials l's deny cache holds.
func DenyCacheLen(l *Limiter) int {
	if l.denies == nil {
		return 0
	}
	n := 0
	for i := range l.denies.shards {
		sh := &l.denies.shards[i]
		sh.mu.Lock()
		n += len(sh.m)
		sh.mu.Unlock()
	}
	return n
}
