package reftest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	pb "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	goredis "github.com/redis/go-redis/v9"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// referenceModule is the envoyproxy/ratelimit the test compares against,
// as the Go module proxy serves it; its command is ./src/service_cmd.
const referenceModule = "github.com/envoyproxy/ratelimit@v1.4.1-0.20260122083618-3fb702589d36"

// binaries are the two services' executables, built once per test binary.
type binaries struct{ reference, ratelimitd string }

var (
	buildOnce sync.Once
	built     binaries
	buildErr  error
	buildDir  string
)

// TestMain removes the executables once every test is done.
func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// gate skips t unless a real Redis is named and slow tests are asked for:
// building the reference takes a while.
func gate(t *testing.T) string {
	t.Helper()
	addr := os.Getenv("RATELIMIT_REDIS_ADDR")
	if addr == "" || os.Getenv("RATELIMIT_SLOW_TESTS") != "1" {
		t.Skip("set RATELIMIT_REDIS_ADDR=host:port and RATELIMIT_SLOW_TESTS=1 to run ratelimitd against envoyproxy/ratelimit")
	}
	return addr
}

// build returns both executables, building them (at once) the first time.
func build(t *testing.T) binaries {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "reftest")
		if buildErr != nil {
			return
		}
		var wg sync.WaitGroup
		var refErr, ownErr error
		wg.Go(func() { built.reference, refErr = buildReference(buildDir) })
		wg.Go(func() { built.ratelimitd, ownErr = buildRatelimitd(buildDir) })
		wg.Wait()
		if refErr != nil {
			buildErr = refErr
		} else {
			buildErr = ownErr
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return built
}

// goCmd is a go command run in dir, outside any workspace.
func goCmd(dir string, args ...string) *exec.Cmd {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly -buildvcs=false")
	return cmd
}

// buildReference downloads envoyproxy/ratelimit's module and builds its
// service into dir, with its own go.mod and go.sum.
func buildReference(dir string) (string, error) {
	dl := goCmd(dir, "mod", "download", "-json", referenceModule)
	var stderr bytes.Buffer
	dl.Stderr = &stderr
	out, err := dl.Output()
	if err != nil {
		return "", fmt.Errorf("go mod download %s: %v: %s", referenceModule, err, stderr.String())
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		return "", fmt.Errorf("go mod download %s: no directory in %q", referenceModule, out)
	}
	exe := filepath.Join(dir, "envoy-ratelimit")
	if out, err := goCmd(mod.Dir, "build", "-o", exe, "./src/service_cmd").CombinedOutput(); err != nil {
		return "", fmt.Errorf("building envoyproxy/ratelimit: %v: %s", err, out)
	}
	return exe, nil
}

// buildRatelimitd builds this tree's ratelimitd into dir.
func buildRatelimitd(dir string) (string, error) {
	exe := filepath.Join(dir, "ratelimitd")
	if out, err := goCmd(filepath.Join("..", ".."), "build", "-o", exe, "./cmd/ratelimitd").CombinedOutput(); err != nil {
		return "", fmt.Errorf("building ratelimitd: %v: %s", err, out)
	}
	return exe, nil
}

// server is a Redis the services share: a single node or a Cluster.
type server struct {
	name  string   // "redis-server" or "redis-cluster"
	addrs []string // host:port of the node, or of the Cluster's nodes
}

// redisType is REDIS_TYPE for the server.
func (s server) redisType() string {
	if s.name == "redis-cluster" {
		return "CLUSTER"
	}
	return "SINGLE"
}

// client is a go-redis client of the server.
func (s server) client() goredis.UniversalClient {
	if s.name == "redis-cluster" {
		return goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: s.addrs})
	}
	return goredis.NewClient(&goredis.Options{Addr: s.addrs[0]})
}

// servers are the real Redis the environment names: the single node, and
// the Cluster when RATELIMIT_REDIS_CLUSTER_ADDRS is set.
func servers(single string) []server {
	out := []server{{name: "redis-server", addrs: []string{single}}}
	if c := os.Getenv("RATELIMIT_REDIS_CLUSTER_ADDRS"); c != "" {
		out = append(out, server{name: "redis-cluster", addrs: strings.Split(c, ",")})
	}
	return out
}

// proc is one running service.
type proc struct {
	name   string
	cmd    *exec.Cmd
	log    string // its output's file
	http   string // host:port of /healthcheck and /json
	client pb.RateLimitServiceClient
	prefix string // its Redis keys' prefix
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// token is a short random name, so that runs never share Redis keys.
func token() string {
	b := make([]byte, 4)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// start runs exe as name with env (beside the ports, which it picks)
// until t ends, and waits for its /healthcheck. It kills the process by
// its PID in t.Cleanup and deletes the Redis keys of its prefix.
func start(t *testing.T, name, exe string, srv server, env map[string]string) *proc {
	t.Helper()
	p := &proc{name: name, prefix: "reftest-" + name + "-" + token() + ":"}
	httpPort, grpcPort, debugPort := freePort(t), freePort(t), freePort(t)
	p.http = "127.0.0.1:" + strconv.Itoa(httpPort)
	all := map[string]string{
		"HOST": "127.0.0.1", "PORT": strconv.Itoa(httpPort),
		"GRPC_HOST": "127.0.0.1", "GRPC_PORT": strconv.Itoa(grpcPort),
		"DEBUG_HOST": "127.0.0.1", "DEBUG_PORT": strconv.Itoa(debugPort),
		"USE_STATSD": "false", "DISABLE_STATS": "true", "LOG_LEVEL": "WARN",
		"REDIS_SOCKET_TYPE": "tcp", "REDIS_TYPE": srv.redisType(),
		"REDIS_URL": strings.Join(srv.addrs, ","), "CACHE_KEY_PREFIX": p.prefix,
		// The reference's default, and ratelimitd's time budget: both wait
		// for Redis on a busy machine rather than ratelimitd's fallback
		// deciding after its default 100ms.
		"REDIS_TIMEOUT": "10s",
	}
	for k, v := range env {
		all[k] = v
	}
	p.cmd = exec.Command(exe)
	p.cmd.Env = os.Environ()
	for k, v := range all {
		p.cmd.Env = append(p.cmd.Env, k+"="+v)
	}
	p.log = filepath.Join(t.TempDir(), name+".log")
	f, err := os.Create(p.log)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd.Stdout, p.cmd.Stderr = f, f
	if err := p.cmd.Start(); err != nil {
		f.Close()
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { p.cmd.Wait(); f.Close(); close(exited) }()
	t.Cleanup(func() {
		p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			p.cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("%s's log:\n%s", name, tail(p.log, 30))
		}
		deleteKeys(t, srv, p.prefix)
	})
	conn, err := grpc.NewClient("127.0.0.1:"+strconv.Itoa(grpcPort), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	p.client = pb.NewRateLimitServiceClient(conn)
	waitHealthy(t, p, exited)
	return p
}

// waitHealthy waits until p answers its /healthcheck, failing t if p
// exits first or does not answer within 30 seconds.
func waitHealthy(t *testing.T, p *proc, exited <-chan struct{}) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		resp, err := http.Get("http://" + p.http + "/healthcheck")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-exited:
			t.Fatalf("%s exited before it was healthy:\n%s", p.name, tail(p.log, 30))
		case <-tick.C:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not healthy after 30s:\n%s", p.name, tail(p.log, 30))
		}
	}
}

// tail is the last n lines of file.
func tail(file string, n int) string {
	b, _ := os.ReadFile(file)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// deleteKeys deletes every key of srv under prefix, on every master.
func deleteKeys(t *testing.T, srv server, prefix string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := srv.client()
	defer c.Close()
	del := func(ctx context.Context, n *goredis.Client) error {
		iter := n.Scan(ctx, 0, prefix+"*", 1000).Iterator()
		for iter.Next(ctx) {
			if err := n.Del(ctx, iter.Val()).Err(); err != nil {
				return err
			}
		}
		return iter.Err()
	}
	var err error
	switch c := c.(type) {
	case *goredis.ClusterClient:
		err = c.ForEachMaster(ctx, del)
	case *goredis.Client:
		err = del(ctx, c)
	}
	if err != nil {
		t.Errorf("deleting the keys of %q: %v", prefix, err)
	}
}
