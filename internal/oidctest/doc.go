// Package oidctest runs a real OpenID Provider in process for tests:
// github.com/zitadel/oidc/v3's op package, over httptest, with its
// in-memory example storage for auth requests, codes and device
// authorizations. What the tests need beyond it is layered on top: a
// signing key set that the test may rotate (RS256 or ES256), a groups
// claim per user, a login page that logs in the user the test chose (so
// a test plays the browser with a plain HTTP client), a device
// verification page, and Forge, which signs arbitrary claims with the
// provider's own keys (expired tokens, other audiences, alg none) that a
// well-behaved provider would never issue.
package oidctest
