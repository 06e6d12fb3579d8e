package memory

// Local reports true: the store decides in the process's memory and never
// waits on I/O, so a limiter calls it directly, without a time budget,
// breaker or deny cache (see ratelimit.Local).
func (*Store) Local() bool { return true }
