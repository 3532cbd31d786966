package inspector

import (
	"net/http"
	"net/url"
	"strings"
)

// crossSite refuses a request another site's page made a browser send: a
// Sec-Fetch-Site header other than same-origin or none (none is a request
// the user typed or bookmarked), or an Origin whose host is not the
// request's Host. A request with neither header does not come from a
// browser page (curl, a script): it carries no ambient credentials to
// abuse, so it is let through. This is done by hand, not with
// http.CrossOriginProtection, so that the library keeps its Go floor.
func crossSite(r *http.Request) error {
	refuse := func(why string) error {
		return &apiError{status: http.StatusForbidden, code: "cross_site", message: "cross-site request refused: " + why}
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" {
		if site != "same-origin" && site != "none" {
			return refuse("Sec-Fetch-Site is " + site)
		}
		return nil
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return nil
	}
	if origin == "null" {
		return refuse("Origin is null")
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return refuse("Origin is not a URL")
	}
	if !strings.EqualFold(u.Host, r.Host) {
		return refuse("Origin " + u.Host + " is not " + r.Host)
	}
	return nil
}
