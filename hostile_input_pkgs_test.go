package plait_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/cmdtask"
	"github.com/plaitdag/plait/httptask"
	"github.com/plaitdag/plait/store/memstore"
	"github.com/plaitdag/plait/store/redisstore"
	"github.com/plaitdag/plait/workflowfile"
)

// newWith answers New's error on a fresh memstore.
func newWith(opts ...plait.Option) error {
	st, err := memstore.New()
	if err != nil {
		return err
	}
	_, err = plait.New(st, opts...)
	return err
}

// validate answers the error of a one-task workflow built with opts.
func validate(wfName, task, handler string, opts ...plait.TaskOption) error {
	return plait.NewWorkflow(wfName).Task(task, handler, nil, opts...).Validate()
}

// redisNew answers redisstore.New's error for opts, which it reports
// before reaching the server.
func redisNew(opts ...redisstore.Option) error {
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err := redisstore.New(ctx, client, opts...)
	return err
}

// yamlString writes v as a YAML double-quoted scalar, its bytes as they
// are except the ones the syntax escapes.
func yamlString(v string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '"' || c == '\\':
			b.WriteString(`\` + string(c))
		case c < 0x20:
			fmt.Fprintf(&b, `\x%02x`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// fileRow is a workflowfile.Parse row: doc holds %[1]s where the value goes.
func fileRow(field, doc string) hostileRow {
	return hostileRow{name: "workflowfile.Parse/" + field, call: func(_ *hostileEnv, v string) error {
		return e2(workflowfile.Parse("wf.yaml", []byte(fmt.Sprintf(doc, yamlString(v)))))
	}}
}

// accepting marks a row whose entry point takes some hostile values by
// design (a long argument, a long method token).
func (r hostileRow) accepting() hostileRow { r.accept = true; return r }

// taskDoc is a workflow file of one task whose fields are t.
func taskDoc(t string) string { return `{"name": "wf", "tasks": [{"name": "a", ` + t + `}]}` }

// packageRows are the entry points that need no store: New's options, the
// workflow builder, workflow files, the HTTP and command task specs and
// the stores' own options.
func packageRows() []hostileRow {
	return []hostileRow{
		{name: "New/WithQueues", call: func(_ *hostileEnv, v string) error { return newWith(plait.WithQueues(v)) }},
		{name: "New/WithWorkerID", call: func(_ *hostileEnv, v string) error { return newWith(plait.WithWorkerID(v)) }},
		{name: "New/WithCapabilities", call: func(_ *hostileEnv, v string) error { return newWith(plait.WithCapabilities(v)) }},
		{name: "New/WithQueueLimit", call: func(_ *hostileEnv, v string) error { return newWith(plait.WithQueueLimit(v, 1)) }},
		{name: "NewWorkflow/name", call: func(_ *hostileEnv, v string) error { return validate(v, "a", "h") }},
		{name: "NewWorkflow/OnError", call: func(_ *hostileEnv, v string) error {
			return plait.NewWorkflow("wf", plait.OnError(plait.ErrorStrategy(v))).Task("a", "h", nil).Validate()
		}},
		{name: "Task/name", call: func(_ *hostileEnv, v string) error { return validate("wf", v, "h") }},
		{name: "Task/handler", call: func(_ *hostileEnv, v string) error { return validate("wf", "a", v) }},
		{name: "Task/OnQueue", call: func(_ *hostileEnv, v string) error { return validate("wf", "a", "h", plait.OnQueue(v)) }},
		{name: "Task/Requires", call: func(_ *hostileEnv, v string) error { return validate("wf", "a", "h", plait.Requires(v)) }},
		{name: "Task/ConcurrencyKey", call: func(_ *hostileEnv, v string) error {
			return validate("wf", "a", "h", plait.ConcurrencyKey(v, 1))
		}},
		{name: "Task/RateKey", call: func(_ *hostileEnv, v string) error {
			return validate("wf", "a", "h", plait.RateKey(v, 1, time.Second))
		}},
		{name: "Task/After", call: func(_ *hostileEnv, v string) error { return validate("wf", "a", "h", plait.After(v)) }},
		{name: "Task/AfterCompletion", call: func(_ *hostileEnv, v string) error {
			return validate("wf", "a", "h", plait.AfterCompletion(v))
		}},
		{name: "Task/AfterFailure", call: func(_ *hostileEnv, v string) error {
			return validate("wf", "a", "h", plait.AfterFailure(v))
		}},
		{name: "workflowfile.Parse/filename", call: func(_ *hostileEnv, v string) error {
			return e2(workflowfile.Parse(v, []byte(taskDoc(`"handler": "h", "timeout": "x"`))))
		}},
		fileRow("name", `{"name": %[1]s, "tasks": [{"name": "a", "handler": "h"}]}`),
		fileRow("strategy", `{"name": "wf", "strategy": %[1]s, "tasks": [{"name": "a", "handler": "h"}]}`),
		fileRow("unknown field", `{"name": "wf", %[1]s: 1, "tasks": [{"name": "a", "handler": "h"}]}`),
		fileRow("task name", `{"name": "wf", "tasks": [{"name": %[1]s, "handler": "h"}]}`),
		fileRow("type", taskDoc(`"type": %[1]s`)),
		fileRow("handler", taskDoc(`"handler": %[1]s`)),
		fileRow("queue", taskDoc(`"handler": "h", "queue": %[1]s`)),
		fileRow("requires", taskDoc(`"handler": "h", "requires": [%[1]s]`)),
		fileRow("depends_on", taskDoc(`"handler": "h", "depends_on": [%[1]s]`)),
		fileRow("depends_on on", taskDoc(`"handler": "h", "depends_on": [{"task": "b", "on": %[1]s}]`)),
		fileRow("join", taskDoc(`"handler": "h", "join": %[1]s`)),
		fileRow("priority", taskDoc(`"handler": "h", "priority": %[1]s`)),
		fileRow("timeout", taskDoc(`"handler": "h", "timeout": %[1]s`)),
		fileRow("retry", taskDoc(`"handler": "h", "retry": %[1]s`)),
		fileRow("retry.backoff", taskDoc(`"handler": "h", "retry": {"backoff": %[1]s}`)),
		fileRow("retry.multiplier", taskDoc(`"handler": "h", "retry": {"multiplier": %[1]s}`)),
		fileRow("command.argv", taskDoc(`"type": "command", "command": {"argv": [%[1]s]}`)).accepting(),
		fileRow("command.stdin_from", taskDoc(`"type": "command", "command": {"argv": ["x"], "stdin_from": %[1]s}`)),
		fileRow("command.env", taskDoc(`"type": "command", "command": {"argv": ["x"], "env": {%[1]s: "1"}}`)),
		fileRow("command field", taskDoc(`"type": "command", "command": {"argv": ["x"], %[1]s: 1}`)),
		fileRow("http.url", taskDoc(`"type": "http", "http": {"url": %[1]s}`)),
		fileRow("http.method", taskDoc(`"type": "http", "http": {"url": "http://x", "method": %[1]s}`)).accepting(),
		fileRow("http.timeout", taskDoc(`"type": "http", "http": {"url": "http://x", "timeout": %[1]s}`)),
		fileRow("http.headers", taskDoc(`"type": "http", "http": {"url": "http://x", "headers": {%[1]s: "1"}}`)),
		fileRow("http.body_from", taskDoc(`"type": "http", "http": {"url": "http://x", "body_from": %[1]s}`)),
		{name: "httptask.AllowHosts", call: func(_ *hostileEnv, v string) error { return e2(httptask.New(httptask.AllowHosts(v + "/"))) }},
		{name: "httptask.Spec/URL", accept: true, call: func(_ *hostileEnv, v string) error { return (&httptask.Spec{URL: "http://x/" + v}).Validate() }},
		{name: "httptask.Spec/URL host", accept: true, call: func(_ *hostileEnv, v string) error { return (&httptask.Spec{URL: "http://" + v}).Validate() }},
		{name: "httptask.Spec/Method", accept: true, call: func(_ *hostileEnv, v string) error {
			return (&httptask.Spec{URL: "http://x", Method: v}).Validate()
		}},
		{name: "httptask.Spec/Headers", call: func(_ *hostileEnv, v string) error {
			return (&httptask.Spec{URL: "http://x", Headers: map[string]string{v + ":": "1"}}).Validate()
		}},
		{name: "httptask.Spec/Timeout", call: func(_ *hostileEnv, v string) error {
			return (&httptask.Spec{URL: "http://x", Timeout: v}).Validate()
		}},
		{name: "httptask.NotAllowedError", call: func(_ *hostileEnv, v string) error { return &httptask.NotAllowedError{Host: v} }},
		{name: "cmdtask.Allow", call: func(_ *hostileEnv, v string) error { return e2(cmdtask.New(cmdtask.Allow("a/" + v))) }},
		{name: "cmdtask.AllowShell", call: func(_ *hostileEnv, v string) error { return e2(cmdtask.New(cmdtask.AllowShell(v))) }},
		{name: "cmdtask.WithBaseEnv", call: func(_ *hostileEnv, v string) error { return e2(cmdtask.New(cmdtask.WithBaseEnv([]string{v}))) }},
		{name: "cmdtask.WithDir", accept: true, call: func(_ *hostileEnv, v string) error { return e2(cmdtask.New(cmdtask.WithDir(v))) }},
		{name: "cmdtask.Spec/Argv", accept: true, call: func(_ *hostileEnv, v string) error { return (&cmdtask.Spec{Argv: []string{v}}).Validate() }},
		{name: "cmdtask.Spec/Env", call: func(_ *hostileEnv, v string) error {
			return (&cmdtask.Spec{Argv: []string{"x"}, Env: map[string]string{v + "=": "1"}}).Validate()
		}},
		{name: "cmdtask.NotAllowedError", call: func(_ *hostileEnv, v string) error { return &cmdtask.NotAllowedError{Program: v} }},
		{name: "memstore.WithRetentionFor", call: func(_ *hostileEnv, v string) error {
			return e2(memstore.New(memstore.WithRetentionFor(v, "", time.Hour)))
		}},
		{name: "redisstore.WithPrefix", call: func(_ *hostileEnv, v string) error { return redisNew(redisstore.WithPrefix(v)) }},
		{name: "redisstore.WithRetentionFor", call: func(_ *hostileEnv, v string) error {
			return redisNew(redisstore.WithRetentionFor(v, "", time.Hour))
		}},
	}
}
