package workflowfile

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/plaitdag/plait/cmdtask"
	"github.com/plaitdag/plait/httptask"
)

// schema is the part of JSON Schema that schema.json uses.
type schema struct {
	Ref                  string             `json:"$ref"`
	Type                 string             `json:"type"`
	Required             []string           `json:"required"`
	Properties           map[string]*schema `json:"properties"`
	AdditionalProperties json.RawMessage    `json:"additionalProperties"`
	Items                *schema            `json:"items"`
	Enum                 []any              `json:"enum"`
	AnyOf                []*schema          `json:"anyOf"`
	MinItems             *int               `json:"minItems"`
	Minimum              *float64           `json:"minimum"`
	Maximum              *float64           `json:"maximum"`
	Pattern              string             `json:"pattern"`
	Defs                 map[string]*schema `json:"$defs"`
}

func loadSchema(t *testing.T) *schema {
	t.Helper()
	b, err := os.ReadFile("schema.json")
	require.NoError(t, err)
	var s schema
	require.NoError(t, json.Unmarshal(b, &s))
	return &s
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sorted(s []string) []string {
	s = append([]string(nil), s...)
	sort.Strings(s)
	return s
}

func enumOf(s *schema) []string {
	var out []string
	for _, v := range s.Enum {
		out = append(out, fmt.Sprint(v))
	}
	sort.Strings(out)
	return out
}

func TestSchemaAgreesWithTheLoader(t *testing.T) {
	t.Parallel()
	s := loadSchema(t)
	dep := s.Defs["dependency"].AnyOf[1]
	for _, c := range []struct {
		part   string
		schema []string
		loader []string
	}{
		{"file", keys(s.Properties), fileFields},
		{"task", keys(s.Defs["task"].Properties), taskFields},
		{"dependency", keys(dep.Properties), depFields},
		{"retry", keys(s.Defs["retry"].Properties), retryFields},
		{"command", keys(s.Defs["command"].Properties), jsonFields(reflect.TypeOf(cmdtask.Spec{}))},
		{"http", keys(s.Defs["http"].Properties), jsonFields(reflect.TypeOf(httptask.Spec{}))},
		{"type", enumOf(s.Defs["task"].Properties["type"]), TaskTypes()},
		{"strategy", enumOf(s.Properties["strategy"]), []string{"continue", "skip", "stop"}},
		{"priority", enumOf(s.Defs["task"].Properties["priority"]), keys(priorities)},
		{"join", enumOf(s.Defs["task"].Properties["join"]), keys(joins)},
		{"on", enumOf(dep.Properties["on"]), keys(conditions)},
		{"backoff", enumOf(s.Defs["retry"].Properties["backoff"]), keys(backoffs)},
	} {
		require.Equal(t, sorted(c.loader), sorted(c.schema), "schema.json and the loader must know the same %s fields", c.part)
	}
}

// validate checks v against s, the subset of JSON Schema schema.json uses,
// and returns the first violation.
func (root *schema) validate(s *schema, v any, at string) error {
	if s.Ref != "" {
		return root.validate(root.Defs[strings.TrimPrefix(s.Ref, "#/$defs/")], v, at)
	}
	if len(s.AnyOf) > 0 {
		var errs []string
		for _, alt := range s.AnyOf {
			err := root.validate(alt, v, at)
			if err == nil {
				return nil
			}
			errs = append(errs, err.Error())
		}
		return fmt.Errorf("%s matches no alternative: %s", at, strings.Join(errs, "; "))
	}
	if len(s.Enum) > 0 {
		for _, e := range s.Enum {
			if reflect.DeepEqual(e, v) {
				return nil
			}
		}
		return fmt.Errorf("%s: %v is not in %v", at, v, s.Enum)
	}
	switch s.Type {
	case "object":
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: want an object", at)
		}
		for _, r := range s.Required {
			if _, ok := m[r]; !ok {
				return fmt.Errorf("%s: %s is required", at, r)
			}
		}
		for k, fv := range m {
			ps := s.Properties[k]
			if ps == nil {
				switch string(s.AdditionalProperties) {
				case "", "true":
					continue
				case "false":
					return fmt.Errorf("%s: unknown field %s", at, k)
				}
				ps = &schema{}
				if err := json.Unmarshal(s.AdditionalProperties, ps); err != nil {
					return err
				}
			}
			if err := root.validate(ps, fv, at+"."+k); err != nil {
				return err
			}
		}
	case "array":
		a, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%s: want an array", at)
		}
		if s.MinItems != nil && len(a) < *s.MinItems {
			return fmt.Errorf("%s: fewer than %d items", at, *s.MinItems)
		}
		for i, item := range a {
			if err := root.validate(s.Items, item, fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return err
			}
		}
	case "string":
		str, ok := v.(string)
		if !ok {
			return fmt.Errorf("%s: want a string", at)
		}
		if s.Pattern != "" && !regexp.MustCompile(s.Pattern).MatchString(str) {
			return fmt.Errorf("%s: %q does not match %s", at, str, s.Pattern)
		}
	case "integer", "number":
		n, ok := v.(float64)
		if !ok || (s.Type == "integer" && n != float64(int64(n))) {
			return fmt.Errorf("%s: want an %s", at, s.Type)
		}
		if (s.Minimum != nil && n < *s.Minimum) || (s.Maximum != nil && n > *s.Maximum) {
			return fmt.Errorf("%s: %v is out of range", at, n)
		}
	}
	return nil
}

// exampleFiles lists every workflow file the repository ships as an
// example.
func exampleFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, pattern := range []string{"testdata/valid/*", "../examples/*/*.yaml", "../examples/*/*.json"} {
		m, err := filepath.Glob(pattern)
		require.NoError(t, err)
		files = append(files, m...)
	}
	require.NotEmpty(t, files)
	return files
}

func TestExampleFilesLoadAndValidateAgainstTheSchema(t *testing.T) {
	t.Parallel()
	root := loadSchema(t)
	for _, f := range exampleFiles(t) {
		_, err := Load(f)
		require.NoError(t, err, "%s must load", f)
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		var v any
		require.NoError(t, yaml.Unmarshal(b, &v))
		// Through JSON, so values have the types a JSON Schema validator
		// sees (numbers as float64).
		j, err := json.Marshal(v)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(j, &v))
		require.NoError(t, root.validate(root, v, "$"), "%s must validate against schema.json", f)
	}
}

func TestSchemaRejectsWhatTheLoaderRejects(t *testing.T) {
	t.Parallel()
	root := loadSchema(t)
	for _, src := range []string{
		`{"name": "wf", "tasks": [{"name": "a", "handler": "h", "dependson": ["b"]}]}`,
		`{"name": "wf", "tasks": [{"name": "a", "type": "python"}]}`,
		`{"name": "wf", "tasks": [{"name": "a", "handler": "h", "timeout": "5 parsecs"}]}`,
		`{"tasks": [{"name": "a", "handler": "h"}]}`,
	} {
		var v any
		require.NoError(t, json.Unmarshal([]byte(src), &v))
		require.Error(t, root.validate(root, v, "$"), "schema.json must refuse %s", src)
		_, err := Parse("wf.json", []byte(src))
		require.Error(t, err, "the loader must refuse %s", src)
	}
}
