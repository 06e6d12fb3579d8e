package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ratelimit-go/ratelimit/envoy/rls"
)

// settings are what ratelimitd reads from its environment, under
// envoyproxy/ratelimit's names and defaults.
type settings struct {
	host, grpcHost, debugHost   string
	port, grpcPort, debugPort   int
	logLevel                    string
	redisURL, redisSocketType   string
	redisType, redisAuth        string
	redisPoolSize               int
	redisTimeout                time.Duration // REDIS_TIMEOUT when set: the library's time budget (100ms otherwise)
	cacheKeyPrefix              string
	localCache                  bool // LOCAL_CACHE_SIZE_IN_BYTES > 0: the library's deny cache
	runtime                     rls.Runtime
	opts                        rls.Options
	healthyWithAtLeastOneConfig bool
}

// loadSettings reads the environment through getenv; a value that does
// not parse is an error naming its variable.
func loadSettings(getenv func(string) string) (settings, error) {
	var s settings
	var errs []string
	str := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	num := func(name string, def int) int {
		v := getenv(name)
		if v == "" {
			return def
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			errs = append(errs, fmt.Sprintf("%s=%q: want a number", name, v))
		}
		return n
	}
	flag := func(name string, def bool) bool {
		v := getenv(name)
		if v == "" {
			return def
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s=%q: want true or false", name, v))
		}
		return b
	}
	s.host, s.port = str("HOST", "0.0.0.0"), num("PORT", 8080)
	s.grpcHost, s.grpcPort = str("GRPC_HOST", "0.0.0.0"), num("GRPC_PORT", 8081)
	s.debugHost, s.debugPort = str("DEBUG_HOST", "0.0.0.0"), num("DEBUG_PORT", 6070)
	s.logLevel = strings.ToUpper(str("LOG_LEVEL", "WARN"))
	s.redisURL = getenv("REDIS_URL") // none: the memory store
	s.redisSocketType = strings.ToLower(str("REDIS_SOCKET_TYPE", "unix"))
	s.redisType = strings.ToUpper(str("REDIS_TYPE", "SINGLE"))
	s.redisAuth = getenv("REDIS_AUTH")
	s.redisPoolSize = num("REDIS_POOL_SIZE", 10)
	if v := getenv("REDIS_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			errs = append(errs, fmt.Sprintf("REDIS_TIMEOUT=%q: want a positive duration such as 10s", v))
		}
		s.redisTimeout = d
	}
	s.cacheKeyPrefix = getenv("CACHE_KEY_PREFIX")
	s.localCache = num("LOCAL_CACHE_SIZE_IN_BYTES", 0) > 0
	s.runtime = rls.Runtime{
		Root:           str("RUNTIME_ROOT", "/srv/runtime_data/current"),
		Subdirectory:   getenv("RUNTIME_SUBDIRECTORY"),
		AppDirectory:   str("RUNTIME_APPDIRECTORY", "config"),
		WatchRoot:      flag("RUNTIME_WATCH_ROOT", true),
		IgnoreDotFiles: flag("RUNTIME_IGNOREDOTFILES", false),
		Merge:          flag("MERGE_DOMAIN_CONFIG", false),
	}
	s.opts = rls.Options{
		StopIncrementWhenOverLimit: flag("STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT", false),
		Headers:                    flag("LIMIT_RESPONSE_HEADERS_ENABLED", false),
		LimitHeader:                str("LIMIT_LIMIT_HEADER", "RateLimit-Limit"),
		RemainingHeader:            str("LIMIT_REMAINING_HEADER", "RateLimit-Remaining"),
		ResetHeader:                str("LIMIT_RESET_HEADER", "RateLimit-Reset"),
		ShadowMode:                 flag("SHADOW_MODE", false),
		QuotaMode:                  flag("QUOTA_MODE", false),
	}
	s.healthyWithAtLeastOneConfig = flag("HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED", false)
	switch s.redisType {
	case "SINGLE", "CLUSTER", "SENTINEL":
	default:
		errs = append(errs, fmt.Sprintf("REDIS_TYPE=%q: want SINGLE, CLUSTER or SENTINEL", s.redisType))
	}
	switch s.redisSocketType {
	case "unix", "tcp":
	default:
		errs = append(errs, fmt.Sprintf("REDIS_SOCKET_TYPE=%q: want unix or tcp", s.redisSocketType))
	}
	if len(errs) > 0 {
		return s, fmt.Errorf("ratelimitd: %s", strings.Join(errs, "; "))
	}
	return s, nil
}
