package rls

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Runtime is where envoyproxy/ratelimit's runtime finds its files, as its
// RUNTIME_* environment names them.
type Runtime struct {
	Root           string // RUNTIME_ROOT, often a symlink swapped to deploy
	Subdirectory   string // RUNTIME_SUBDIRECTORY
	AppDirectory   string // RUNTIME_APPDIRECTORY: "config" by default
	WatchRoot      bool   // RUNTIME_WATCH_ROOT: reload when Root is swapped; else when a file changes
	IgnoreDotFiles bool   // RUNTIME_IGNOREDOTFILES
	Merge          bool   // MERGE_DOMAIN_CONFIG
}

// Dir is the directory whose files hold the descriptors.
func (r Runtime) Dir() string {
	app := r.AppDirectory
	if app == "" {
		app = "config"
	}
	return filepath.Join(r.Root, r.Subdirectory, app)
}

// Load reads the descriptors of every file under Dir.
func (r Runtime) Load() (*Config, error) { return LoadDir(r.Dir(), r.Merge, r.IgnoreDotFiles) }

// Reloader loads a Runtime's files into a Service again when they change:
// when Root's symlink points elsewhere (WatchRoot), or when a file under
// Dir changes (its name, size or modification time). A file that does not
// load is refused, the rules in force kept, and the error returned.
type Reloader struct {
	rt   Runtime
	svc  *Service
	seen string // the fingerprint of the files last loaded
}

// NewReloader returns a Reloader of rt into svc, loading the files now
// (an empty or missing Dir is an empty Config: every request OK).
func NewReloader(rt Runtime, svc *Service) (*Reloader, error) {
	// No fingerprint is notLoaded: the first Check loads, even an empty
	// Dir, whose fingerprint is "".
	r := &Reloader{rt: rt, svc: svc, seen: notLoaded}
	if _, err := r.Check(); err != nil {
		return r, err
	}
	return r, nil
}

// notLoaded is the fingerprint of a Reloader that has loaded nothing yet:
// a path holds no NUL.
const notLoaded = "\x00"

// Check loads the files if they changed since the last load, and reports
// whether it loaded them.
func (r *Reloader) Check() (bool, error) {
	fp := r.fingerprint()
	if fp == r.seen {
		return false, nil
	}
	cfg, err := r.rt.Load()
	if err != nil {
		r.seen = fp // refused once, until the files change again
		return false, err
	}
	r.seen = fp
	r.svc.SetConfig(cfg)
	return true, nil
}

// Run calls Check every interval until ctx is done, telling onError of the
// files it refuses and onLoad of those it loads.
func (r *Reloader) Run(ctx context.Context, interval time.Duration, onLoad func(*Config), onError func(error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			loaded, err := r.Check()
			switch {
			case err != nil && onError != nil:
				onError(err)
			case loaded && onLoad != nil:
				onLoad(r.svc.Config())
			}
		}
	}
}

// fingerprint is what Check compares: the target of Root with WatchRoot,
// else the name, size and modification time of every file under Dir.
func (r *Reloader) fingerprint() string {
	if r.rt.WatchRoot {
		target, err := filepath.EvalSymlinks(r.rt.Root)
		if err != nil {
			return "missing: " + err.Error()
		}
		return target
	}
	var b strings.Builder
	filepath.WalkDir(r.rt.Dir(), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		info, err := os.Stat(path)
		if err != nil {
			return nil
		}
		fmt.Fprintf(&b, "%s\x00%d\x00%s\n", path, info.Size(), strconv.FormatInt(info.ModTime().UnixNano(), 10))
		return nil
	})
	return b.String()
}
