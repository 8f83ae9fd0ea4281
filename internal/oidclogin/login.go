package oidclogin

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	gooidc "github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// Config says where and as whom to log in.
type Config struct {
	// Issuer is the provider's issuer URL.
	Issuer string
	// ClientID is the public client registered for the CLI at the
	// provider; the coordinator's audience.
	ClientID string
	// Scopes are asked for besides openid (default: profile, email,
	// groups are the provider's to add).
	Scopes []string
	// HTTPClient talks to the provider (default http.DefaultClient).
	HTTPClient *http.Client
}

// ErrNoIDToken is a token answer without an id_token.
var ErrNoIDToken = errors.New("oidclogin: the provider's token answer carries no id_token (is the openid scope granted?)")

// ErrNoDeviceFlow is a provider whose discovery names no device
// authorization endpoint.
var ErrNoDeviceFlow = errors.New("oidclogin: the provider offers no device authorization endpoint; log in without --device")

// oauthConfig discovers the provider and builds the client's settings.
func (c Config) oauthConfig(ctx context.Context, redirect string) (context.Context, *oauth2.Config, error) {
	if c.Issuer == "" || c.ClientID == "" {
		return nil, nil, errors.New("oidclogin: the issuer and the client id are required")
	}
	hc := c.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	ctx = gooidc.ClientContext(ctx, hc)
	p, err := gooidc.NewProvider(ctx, c.Issuer)
	if err != nil {
		return nil, nil, fmt.Errorf("oidclogin: discovery: %w", err)
	}
	scopes := append([]string{gooidc.ScopeOpenID}, c.Scopes...)
	return ctx, &oauth2.Config{ClientID: c.ClientID, Endpoint: p.Endpoint(), RedirectURL: redirect, Scopes: scopes}, nil
}

// idToken takes the ID token out of a token answer.
func idToken(tok *oauth2.Token) (string, error) {
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return "", ErrNoIDToken
	}
	return raw, nil
}
