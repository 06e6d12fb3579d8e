package redisstore_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit"
	redisstore "github.com/ratelimit-go/ratelimit/store/redis"
)

// addReplica starts a node of the test's own and makes it a replica of
// master i, once it has synced.
func (pc *privateCluster) addReplica(t *testing.T, i int) *redisProc {
	t.Helper()
	bus, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	p := startRedis(t, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
		"--cluster-node-timeout", "1000", "--cluster-port", strconv.Itoa(bus))
	ctx := context.Background()
	c := goredis.NewClient(&goredis.Options{Addr: p.Addr()})
	defer c.Close()
	first := goredis.NewClient(&goredis.Options{Addr: pc.addrs[0]})
	err = first.Do(ctx, "cluster", "meet", "127.0.0.1", p.Port(), busPort(t, c)).Err()
	first.Close()
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for { // it must know the master before it can replicate it
		if err := c.Do(ctx, "cluster", "replicate", pc.ids[i]).Err(); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("the replica cannot replicate master %d: %v", i, err)
		}
		time.Sleep(50 * time.Millisecond) // polling the servers' view
	}
	for {
		info, _ := c.Info(ctx, "replication").Result()
		if strings.Contains(info, "master_link_status:up") {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("the replica has not synced after 15 s: %s", info)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestClusterMasterFailsOverToItsReplica: a master is killed and its
// replica promoted; decisions of its keys go to the new master within
// seconds of the promotion (the store asks the client to read the slots
// again when a call gets no answer), not after go-redis's own reload, a
// minute later, with every decision until then refused.
func TestClusterMasterFailsOverToItsReplica(t *testing.T) {
	pc := startCluster(t)
	replica := pc.addReplica(t, 0)
	cc := pc.client(t)
	s := redisstore.New(cc, redisstore.WithPrefix(prefix(t)))
	l := ratelimit.PerHour(1000)
	var key string
	for _, k := range spreadKeys("failover", 30) {
		if pc.master(t, cc, s.Key(k, ratelimit.TokenBucket)) == 0 {
			key = k
			break
		}
	}
	if key == "" {
		t.Fatal("no key on master 0")
	}
	decide := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		_, err := s.AllowN(ctx, key, l, 1)
		return err
	}
	if err := decide(); err != nil {
		t.Fatal(err)
	}
	var keys []string // more keys of master 0, for batches
	for _, k := range spreadKeys("failover-batch", 200) {
		if pc.master(t, cc, s.Key(k, ratelimit.TokenBucket)) == 0 {
			keys = append(keys, k)
		}
	}
	burst := func() []error {
		errs := make(chan error, 64)
		for i := range 64 {
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				defer cancel()
				_, err := s.AllowN(ctx, keys[i%len(keys)], l, 1)
				errs <- err
			}()
		}
		out := make([]error, 64)
		for i := range out {
			out[i] = <-errs
		}
		return out
	}
	for _, err := range burst() { // the batchers cache the keys' routes
		if err != nil {
			t.Fatal(err)
		}
	}
	pc.procs[0].Kill()
	killed := time.Now()
	rc := goredis.NewClient(&goredis.Options{Addr: replica.Addr()})
	defer rc.Close()
	var promoted time.Duration
	for {
		err := decide()
		if promoted == 0 {
			if role, _ := rc.Do(context.Background(), "role").Slice(); len(role) > 0 && role[0] == "master" {
				promoted = time.Since(killed)
			}
		}
		if err == nil && promoted > 0 {
			break
		}
		if time.Since(killed) > 20*time.Second {
			t.Fatalf("still failing 20 s after the master was killed (replica promoted after %v): %v", promoted, err)
		}
		time.Sleep(20 * time.Millisecond) // polling: a refused connection fails at once
	}
	t.Logf("replica promoted %v after the kill; decided on it %v after the kill", promoted, time.Since(killed))
	// Batches too: 64 decisions at once on keys of the old master, whose
	// routes the batchers cached before the kill, go to the new one. A
	// decision the store sheds unsent (its queue to a node that has just
	// taken over, dialling and loading its scripts on a loaded machine,
	// longer than the decision's deadline) is not a route to the dead one;
	// every other is answered.
	answered := 0
	for _, err := range burst() {
		switch {
		case err == nil:
			answered++
		case !errors.Is(err, ratelimit.ErrNotSent):
			t.Errorf("a decision on the new master after the failover: %v", err)
		}
	}
	if answered == 0 {
		t.Error("no decision of the burst answered by the new master")
	}
}
