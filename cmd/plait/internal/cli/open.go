package cli

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/store/redisstore"
)

// OpenRedis opens a client Scheduler over the Redis store c names. The
// client is closed when ctx is done.
func OpenRedis(ctx context.Context, c Conn) (*plait.Scheduler, error) {
	client, err := RedisClient(c)
	if err != nil {
		return nil, err
	}
	context.AfterFunc(ctx, func() { _ = client.Close() })
	// The command joins a deployment: it must not record a layout under a
	// mistyped prefix.
	opts := []redisstore.Option{redisstore.WithExistingPrefix()}
	if c.Prefix != "" {
		opts = append(opts, redisstore.WithPrefix(c.Prefix))
	}
	if c.Shards != 0 {
		opts = append(opts, redisstore.WithShards(c.Shards))
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	opts = append(opts, redisstore.WithLogger(quiet))
	st, err := redisstore.New(ctx, client, opts...)
	if err != nil {
		_ = client.Close()
		return nil, err
	}
	return plait.New(st, plait.WithLogger(quiet))
}

// RedisClient answers the client a URL names:
//
//	redis://[user:password@]host:port[/db]        one server
//	rediss://...                                   the same over TLS
//	redis://host1:port,host2:port                  a Redis Cluster, by seeds
//	redis+cluster://[user:password@]host:port,...  a Redis Cluster
//	redis+sentinel://[user:password@]s1:port,s2:port/master[/db]
//	                                               a master found by Sentinel
//
// TLS is "rediss" in any of them (rediss+cluster, rediss+sentinel). The
// user and password are the Redis ACL user's; c.Cluster reads a one-host
// redis:// URL as a cluster seed.
func RedisClient(c Conn) (redis.UniversalClient, error) {
	u, hostList, err := parseURL(c.Redis)
	if err != nil {
		return nil, err
	}
	base, kind, _ := strings.Cut(u.Scheme, "+")
	if base != "redis" && base != "rediss" {
		return nil, fmt.Errorf("redis URL scheme %q: want redis, rediss, redis+sentinel or redis+cluster", u.Scheme)
	}
	hosts := strings.Split(hostList, ",")
	for i, h := range hosts {
		if h == "" {
			return nil, fmt.Errorf("redis URL %q: an empty host", c.Redis)
		}
		if _, _, err := net.SplitHostPort(h); err != nil {
			hosts[i] = net.JoinHostPort(h, "6379")
		}
	}
	user := u.User.Username()
	password, _ := u.User.Password()
	var tlsConf *tls.Config
	if base == "rediss" {
		host, _, _ := net.SplitHostPort(hosts[0])
		tlsConf = &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
	}
	path := strings.Trim(u.Path, "/")
	switch {
	case kind == "sentinel":
		master, dbText, _ := strings.Cut(path, "/")
		if master == "" {
			return nil, fmt.Errorf("redis URL %q: a sentinel URL names its master: redis+sentinel://host:port/master", c.Redis)
		}
		db, err := dbOf(dbText)
		if err != nil {
			return nil, err
		}
		return redis.NewFailoverClient(&redis.FailoverOptions{
			MasterName: master, SentinelAddrs: hosts, Username: user, Password: password, DB: db, TLSConfig: tlsConf,
		}), nil
	case kind == "cluster" || (kind == "" && (c.Cluster || len(hosts) > 1)):
		if path != "" {
			return nil, fmt.Errorf("redis URL %q: a cluster has no database number", c.Redis)
		}
		return redis.NewClusterClient(&redis.ClusterOptions{Addrs: hosts, Username: user, Password: password, TLSConfig: tlsConf}), nil
	case kind == "":
		db, err := dbOf(path)
		if err != nil {
			return nil, err
		}
		return redis.NewClient(&redis.Options{Addr: hosts[0], Username: user, Password: password, DB: db, TLSConfig: tlsConf}), nil
	}
	return nil, fmt.Errorf("redis URL scheme %q: want redis, rediss, redis+sentinel or redis+cluster", u.Scheme)
}

func dbOf(s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	db, err := strconv.Atoi(s)
	if err != nil || db < 0 {
		return 0, fmt.Errorf("redis URL: database %q is not a number", s)
	}
	return db, nil
}

// parseURL parses a Redis URL whose host may be a comma list, which
// net/url refuses: the list is cut out and answered apart.
func parseURL(raw string) (*url.URL, string, error) {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return nil, "", fmt.Errorf("redis URL %q: want scheme://host:port", raw)
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	auth := rest[:end]
	userinfo, hosts := "", auth
	if at := strings.LastIndex(auth, "@"); at >= 0 {
		userinfo, hosts = auth[:at+1], auth[at+1:]
	}
	u, err := url.Parse(scheme + "://" + userinfo + "host" + rest[end:])
	if err != nil {
		return nil, "", fmt.Errorf("redis URL: %w", err)
	}
	return u, hosts, nil
}
