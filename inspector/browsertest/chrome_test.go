package browsertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromium is the browser the tests drive: PLAIT_CHROMIUM, else Debian's.
// Without one the tests skip, or fail under PLAIT_REQUIRE_BROWSER=1.
func chromium(t *testing.T) string {
	t.Helper()
	path := os.Getenv("PLAIT_CHROMIUM")
	if path == "" {
		path = "/usr/bin/chromium"
	}
	if _, err := exec.LookPath(path); err != nil {
		if os.Getenv("PLAIT_REQUIRE_BROWSER") == "1" {
			t.Fatalf("no browser at %s (PLAIT_REQUIRE_BROWSER=1): %v", path, err)
		}
		t.Skipf("no browser at %s: %v", path, err)
	}
	return path
}

// browser starts a headless Chromium that resolves no name but loopback,
// and answers a tab's context, ended with the test.
func browser(t *testing.T) context.Context {
	t.Helper()
	path := chromium(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.WindowSize(1280, 1000),
		// Nothing but the test server: every other host name fails.
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"),
		chromedp.Flag("proxy-server", "direct://"),
		chromedp.Flag("proxy-bypass-list", "*"),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("lang", "en-US"),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(alloc)
	ctx, cancelTime := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() {
		cancelTime()
		cancelTab()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start %s: %v", path, err)
	}
	return ctx
}

// open loads a page and starts gathering the script errors it throws.
func open(t *testing.T, ctx context.Context, pageURL string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate(pageURL)); err != nil {
		t.Fatalf("open %s: %v", pageURL, err)
	}
}

// waitFor waits until an element matches the CSS selector.
func waitFor(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(wctx, chromedp.WaitReady(chromedp.CSS(sel))); err != nil {
		t.Fatalf("waiting for %s: %v\n%s", sel, err, pageState(ctx))
	}
}

// waitVisible waits until an element matching the CSS selector is shown.
func waitVisible(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(wctx, chromedp.WaitVisible(chromedp.CSS(sel))); err != nil {
		t.Fatalf("waiting to see %s: %v\n%s", sel, err, pageState(ctx))
	}
}

// waitText waits until the element's text contains want.
func waitText(t *testing.T, ctx context.Context, sel, want string) {
	t.Helper()
	expr := fmt.Sprintf(`(() => { const el = document.querySelector(%q); return !!el && el.textContent.includes(%q); })()`, sel, want)
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		t.Fatalf("waiting for %q in %s: %v\n%s", want, sel, err, pageState(ctx))
	}
}

const markValue = "set-at-load"

// mark sets a value on the window: a reload would lose it.
func mark(t *testing.T, ctx context.Context) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`window.__plaitMark = "`+markValue+`"`)); err != nil {
		t.Fatal(err)
	}
}

func checkMark(t *testing.T, ctx context.Context) {
	t.Helper()
	got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`String(window.__plaitMark)`))
	if err != nil {
		t.Fatal(err)
	}
	if got != markValue {
		t.Fatalf("the window's mark is %q, not %q: the page was reloaded", got, markValue)
	}
}

// pageState describes the page for a failure message.
func pageState(ctx context.Context) string {
	c, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	s, err := chromedp.Run(c, chromedp.Evaluate[string](`location.href + "\n" + (document.getElementById("notice") || {}).textContent + "\n" + document.body.innerText.slice(0, 1500)`))
	if err != nil {
		return "(page state unreadable: " + err.Error() + ")"
	}
	return s
}
