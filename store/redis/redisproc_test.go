package redisstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// redisProc is a redis-server of the test's own on a loopback port, for
// fault tests: stop it, resume it, kill it, start it again on the same
// port. It touches no process but its own, by PID, and ends it when the
// test ends.
type redisProc struct {
	t     *testing.T
	bin   string
	port  int
	dir   string
	extra []string

	cmd    *exec.Cmd
	exited chan struct{} // closed once cmd has been waited for
}

// startRedis starts a redis-server on a free loopback port, without
// persistence, with extra arguments such as "--maxmemory", "2mb", and waits
// until it answers PING. The fault tests are slow: without
// RATELIMIT_SLOW_TESTS set the test is skipped. Without redis-server on
// PATH it is skipped too, or fails if RATELIMIT_REDIS_ADDR says a real
// Redis is expected.
func startRedis(t *testing.T, extra ...string) *redisProc {
	t.Helper()
	if os.Getenv("RATELIMIT_SLOW_TESTS") == "" {
		t.Skip("a fault test: it starts a redis-server of its own and takes seconds; set RATELIMIT_SLOW_TESTS=1 to run it (.ci/run does)")
	}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("RATELIMIT_REDIS_ADDR") != "" {
			t.Fatalf("RATELIMIT_REDIS_ADDR is set but redis-server is not on PATH, which the fault tests need: %v", err)
		}
		t.Skip("redis-server is not on PATH: the fault tests start and stop their own (set RATELIMIT_REDIS_ADDR to make this a failure)")
	}
	p := &redisProc{t: t, bin: bin, dir: t.TempDir(), extra: extra}
	t.Cleanup(p.cleanup)
	var last error
	for range 5 {
		if p.port, err = freePort(); err != nil {
			t.Fatal(err)
		}
		if last = p.start(); last == nil {
			return p
		}
	}
	t.Fatalf("redis-server did not start: %v", last)
	return nil
}

// freePort asks the kernel for a free loopback port. Another process may
// take it before redis-server binds it; startRedis then tries another.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// Addr is the server's host:port.
func (p *redisProc) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(p.port)) }

// Port is the server's port.
func (p *redisProc) Port() int { return p.port }

// start runs redis-server on p.port and waits until it answers PING, or
// reports why it did not (such as a port taken meanwhile).
func (p *redisProc) start() error {
	args := append([]string{
		"--port", strconv.Itoa(p.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", p.dir,
		"--logfile", filepath.Join(p.dir, "redis.log"),
	}, p.extra...)
	cmd := exec.Command(p.bin, args...)
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	p.cmd, p.exited = cmd, exited

	c := goredis.NewClient(&goredis.Options{Addr: p.Addr(), DialTimeout: 100 * time.Millisecond, MaxRetries: -1})
	defer c.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("redis-server on port %d exited: %s", p.port, p.log())
		default:
		}
		if time.Now().After(deadline) {
			p.kill()
			return fmt.Errorf("redis-server on port %d does not answer PING after 5s: %v; %s", p.port, err, p.log())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// log returns the tail of the server's log, for error messages.
func (p *redisProc) log() string {
	b, _ := os.ReadFile(filepath.Join(p.dir, "redis.log"))
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

func (p *redisProc) signal(sig syscall.Signal) {
	p.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		p.t.Fatalf("signal %v to redis-server (pid %d): %v", sig, p.cmd.Process.Pid, err)
	}
}

// Stop freezes the server (SIGSTOP): connections stay open and nothing is
// answered, like a server stuck in a long command or a paused VM. It
// returns once the kernel shows the process stopped, so that a command
// written after Stop returns cannot run before Cont.
func (p *redisProc) Stop() {
	p.t.Helper()
	p.signal(syscall.SIGSTOP)
	stat := filepath.Join("/proc", strconv.Itoa(p.cmd.Process.Pid), "stat")
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); {
		b, err := os.ReadFile(stat)
		if err != nil {
			return // no /proc: SIGSTOP takes effect within microseconds anyway
		}
		// "pid (comm) state ...": the state follows the last ')'
		if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) && b[i+2] == 'T' {
			return
		}
		time.Sleep(time.Millisecond)
	}
	p.t.Fatalf("redis-server (pid %d) not stopped 1s after SIGSTOP", p.cmd.Process.Pid)
}

// Cont resumes a stopped server (SIGCONT).
func (p *redisProc) Cont() { p.t.Helper(); p.signal(syscall.SIGCONT) }

// Kill ends the server (SIGKILL) and waits until it is gone: its
// connections are reset and its port refuses connections.
func (p *redisProc) Kill() { p.t.Helper(); p.kill() }

func (p *redisProc) kill() {
	if p.cmd == nil {
		return
	}
	p.cmd.Process.Signal(syscall.SIGCONT)
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
}

// Restart starts a new server on the same port, with the same arguments,
// after Kill: an empty server, since nothing persists.
func (p *redisProc) Restart() {
	p.t.Helper()
	p.kill()
	var err error
	for range 20 { // the port is ours, but may linger a moment
		if err = p.start(); err == nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	p.t.Fatalf("redis-server did not restart on port %d: %v", p.port, err)
}

// cleanup resumes and kills the server the test started, and waits for it.
func (p *redisProc) cleanup() { p.kill() }
