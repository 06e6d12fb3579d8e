package echolimit_test

import (
	"log/slog"
	"os"
	"testing"
)

// TestMain drops what the library logs with slog's default logger: limiters
// that tests make without WithLogger would write their breakers' and error
// handlers' lines amid the test output, hundreds of them for a failing
// store. Tests that read the lines pass a logger of their own.
func TestMain(m *testing.M) {
	slog.SetDefault(slog.New(slog.DiscardHandler))
	os.Exit(m.Run())
}
