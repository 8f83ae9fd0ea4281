package oidclogin

import (
	"context"
	"fmt"
)

// DevicePrompt is what the person is shown: where to go and which code
// to enter (Complete, when the provider gives it, carries the code).
type DevicePrompt struct {
	VerificationURI string
	Complete        string
	UserCode        string
}

// Device runs the device authorization grant: it asks for a code, hands
// it to show, and polls the token endpoint (at the provider's interval)
// until the person approves, refuses, the code expires or ctx ends.
func Device(ctx context.Context, c Config, show func(DevicePrompt)) (string, error) {
	ctx, oc, err := c.oauthConfig(ctx, "")
	if err != nil {
		return "", err
	}
	if oc.Endpoint.DeviceAuthURL == "" {
		return "", ErrNoDeviceFlow
	}
	da, err := oc.DeviceAuth(ctx)
	if err != nil {
		return "", fmt.Errorf("oidclogin: device authorization: %w", err)
	}
	show(DevicePrompt{VerificationURI: da.VerificationURI, Complete: da.VerificationURIComplete, UserCode: da.UserCode})
	tok, err := oc.DeviceAccessToken(ctx, da)
	if err != nil {
		return "", fmt.Errorf("oidclogin: device token: %w", err)
	}
	return idToken(tok)
}
