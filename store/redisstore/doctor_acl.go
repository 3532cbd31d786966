package redisstore

import (
	"context"
	"slices"

	"github.com/redis/go-redis/v9"
)

// checkACL asks ACL DRYRUN whether the user may run each command of
// Commands on a key and a channel under the prefix.
func (n *doctorNode) checkACL(ctx context.Context, c doctorConn) error {
	user := n.user
	if user == "" {
		u, err := c.Do(ctx, "acl", "whoami").Text()
		switch {
		case err == nil:
			user = u
		case refused(err):
			n.unchecked("acl", "ACL WHOAMI: "+err.Error())
			return nil
		default:
			return err
		}
	}
	n.fact("acl_user", user)
	key, channel := n.prefix+":{0}:doctor", n.prefix+":ev"
	cmds := make([]*redis.Cmd, len(commandUses))
	_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, cu := range commandUses {
			cmds[i] = p.Do(ctx, append([]any{"acl", "dryrun", user}, cu.dryRunArgs(key, channel)...)...)
		}
		return nil
	})
	if err != nil && !refused(err) {
		return err
	}
	// DRYRUN refused (no admin rights), unknown (before 7.0), or the user
	// unknown: the same answer for every command, reported once.
	if _, err := cmds[0].Text(); err != nil && slices.IndexFunc(cmds, func(c *redis.Cmd) bool {
		return c.Err() == nil || c.Err().Error() != err.Error()
	}) < 0 {
		n.unchecked("acl "+user, "ACL DRYRUN: "+err.Error())
		return nil
	}
	for i, cu := range commandUses {
		verdict, err := cmds[i].Text()
		switch {
		case err != nil:
			n.unchecked("acl "+user+" "+cu.name, "ACL DRYRUN: "+err.Error())
		case verdict == "OK":
		default:
			n.find(SeverityError, "acl "+user+" "+cu.name, verdict, "allowed on "+n.prefix+":*",
				"the calls that send it fail with a *redisstore.PermissionError, and a script refused midway keeps what it wrote before")
		}
	}
	return nil
}
