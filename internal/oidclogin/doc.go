// Package oidclogin obtains an OpenID Connect ID token for a person at a
// terminal, as a public client (no secret): the device authorization
// grant (RFC 8628), or the authorization code grant with PKCE (RFC 7636)
// on a loopback redirect (RFC 8252: 127.0.0.1 on a port the system
// picks). Endpoints come from the issuer's discovery document. The ID
// token is not verified here: the coordinator that exchanges it does.
package oidclogin
