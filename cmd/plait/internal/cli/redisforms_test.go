package cli

import (
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

func typeName(c redis.UniversalClient) string { return fmt.Sprintf("%T", c) }

// addrsOf answers the addresses a client dials, comma-separated.
func addrsOf(c redis.UniversalClient) string {
	switch cl := c.(type) {
	case *redis.Client:
		return cl.Options().Addr
	case *redis.ClusterClient:
		return strings.Join(cl.Options().Addrs, ",")
	}
	return ""
}
