package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/redisstore"
)

// TestCreateManyAfterScriptsVanish: a pipeline cannot fall back command by
// command, so RunCreateMany reloads what the server lost (a restart without
// persistence empties the script cache and the function libraries) and sends
// the pipeline again, creating each run once.
func TestCreateManyAfterScriptsVanish(t *testing.T) {
	ctx := context.Background()
	backends := map[string]func(t *testing.T) (*redis.Client, func(*redis.Client) error){
		"miniredis": func(t *testing.T) (*redis.Client, func(*redis.Client) error) {
			m := miniredis.RunT(t)
			return redis.NewClient(&redis.Options{Addr: m.Addr()}), func(c *redis.Client) error { return c.ScriptFlush(ctx).Err() }
		},
		"redis-server": func(t *testing.T) (*redis.Client, func(*redis.Client) error) {
			requireServer(t)
			addr, stop, err := runRedisServer()
			require.NoError(t, err)
			t.Cleanup(stop)
			return redis.NewClient(&redis.Options{Addr: addr}), func(c *redis.Client) error {
				if err := c.FunctionFlush(ctx).Err(); err != nil {
					return err
				}
				return c.ScriptFlush(ctx).Err()
			}
		},
	}
	for name, backend := range backends {
		t.Run(name, func(t *testing.T) {
			c, flush := backend(t)
			t.Cleanup(func() { c.Close() })
			s, err := redisstore.New(ctx, c, redisstore.WithLogger(quietLogger()))
			require.NoError(t, err)
			wf := &store.WorkflowSpec{Name: "wf", Tasks: []store.TaskSpec{{Name: "a", Handler: "h", Queue: store.DefaultQueue}}}
			params := make([]*store.RunCreateParams, 10)
			for i := range params {
				params[i] = &store.RunCreateParams{Workflow: wf}
			}
			require.NoError(t, flush(c))
			out, err := s.RunCreateMany(ctx, params)
			require.NoError(t, err)
			for _, o := range out {
				require.NoError(t, o.Err)
				require.False(t, o.Result.Existing)
			}
			res, err := s.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w", Limit: 100, LeaseDuration: time.Minute})
			require.NoError(t, err)
			require.Len(t, res.Tasks, len(params), "each run created once, its root ready once")
		})
	}
}
