package ratelimit

import (
	"errors"
	"log/slog"
)

// WithLogger sets the logger of the limiter's own lines: the failures its
// default error handler logs (see [WithErrorHandler]), dry run's
// would-deny lines ([WithDryRun]), and the changes of state of its
// [Breaker]. The default is slog.Default(), read at each line. A Breaker
// that several limiters share logs with the logger of the first of them
// made with WithLogger.
func WithLogger(logger *slog.Logger) Option {
	return func(c *config) error {
		if logger == nil {
			return errors.New("ratelimit: WithLogger(nil)")
		}
		c.logger = logger
		return nil
	}
}

// logger returns the limiter's logger: WithLogger's, or slog's default.
func (l *Limiter) logger() *slog.Logger {
	if l.log != nil {
		return l.log
	}
	return slog.Default()
}

// useLogger makes the breaker log with logger, unless a limiter gave it
// one already.
func (b *Breaker) useLogger(logger *slog.Logger) {
	b.log.CompareAndSwap(nil, logger)
}

// logger returns the breaker's logger: a limiter's WithLogger, or slog's
// default.
func (b *Breaker) logger() *slog.Logger {
	if l := b.log.Load(); l != nil {
		return l
	}
	return slog.Default()
}
