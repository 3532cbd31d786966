package redisstore_test

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/store/redisstore"
)

// operationsDoc is the operator's guide.
const operationsDoc = "../../docs/operations.md"

// TestOperationsDocCommandList: the ACL user of the guide is allowed
// exactly redisstore.Commands, on its prefix's keys and channels with the
// colon, and the fault-test table counts them.
func TestOperationsDocCommandList(t *testing.T) {
	b, err := os.ReadFile(operationsDoc)
	require.NoError(t, err)
	doc := string(b)
	var line string
	for _, l := range strings.Split(doc, "\n") {
		if strings.HasPrefix(l, "user plait ") {
			require.Empty(t, line, "the guide has one ACL line")
			line = l
		}
	}
	require.NotEmpty(t, line, "the guide has no aclfile line starting \"user plait \"")
	var got []string
	for _, w := range strings.Fields(line) {
		if c, ok := strings.CutPrefix(w, "+"); ok {
			got = append(got, c)
		}
	}
	require.Equal(t, redisstore.Commands(), got, "the guide's ACL line, in order")
	require.Contains(t, line, " resetkeys ~myapp:* resetchannels &myapp:* -@all ")
	count := regexp.MustCompile(`\| (\d+) commands \|`).FindStringSubmatch(doc)
	require.NotNil(t, count, "the fault-test table counts the commands")
	require.Equal(t, strconv.Itoa(len(redisstore.Commands())), count[1])
}
