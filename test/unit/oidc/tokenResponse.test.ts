import { describe, it, expect } from 'vitest';
import { validateConfig } from '../../../src/config/load.js';
import type { ClientConfig } from '../../../src/config/schema.js';
import { shapeTokenResponse } from '../../../src/oidc/tokenResponse.js';
import { versionProfiles } from '../../../src/oidc/versions.js';

const base = 'https://vc.example.com';
const { v1, v2 } = versionProfiles(base);

function client(over: Record<string, unknown> = {}): ClientConfig {
  const config = validateConfig({
    baseUrl: base,
    credentialTypes: [{ name: 'EmployeeBadge', attributes: { FirstName: { type: 'string' } } }],
    clients: [
      {
        clientId: 'hr-portal',
        clientSecret: 'hr-portal-secret-0123456789',
        redirectUris: ['https://hr.example.com/callback'],
        scopes: ['issue.EmployeeBadge', 'EmployeeBadge'],
        ...over,
      },
    ],
  });
  return config.clients[0];
}

const ID_TOKEN = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln';
const providerBody = (over: Record<string, unknown> = {}): Record<string, unknown> => ({
  access_token: 'opaque-access-token',
  id_token: ID_TOKEN,
  token_type: 'Bearer',
  expires_in: 60,
  scope: 'openid issue.EmployeeBadge',
  refresh_token: 'refresh',
  ...over,
});

describe('D3: the token response', () => {
  it('access_token is the ID token itself (spec: "access_token: Same as id_token")', () => {
    const body = providerBody();
    shapeTokenResponse(body, { client: client(), profile: v2 });
    expect(body.access_token).toBe(ID_TOKEN);
    expect(body.id_token).toBe(ID_TOKEN);
  });

  it('token_type is always Bearer', () => {
    const body = providerBody({ token_type: 'DPoP' });
    shapeTokenResponse(body, { client: client(), profile: v2 });
    expect(body.token_type).toBe('Bearer');
  });

  it('carries no refresh_token', () => {
    const body = providerBody();
    shapeTokenResponse(body, { client: client(), profile: v2 });
    expect(body).not.toHaveProperty('refresh_token');
  });

  it('expires_in is a JSON number by default (RFC 6749 §5.1)', () => {
    const body = providerBody();
    shapeTokenResponse(body, { client: client(), profile: v2 });
    expect(body.expires_in).toBe(60);
    expect(JSON.parse(JSON.stringify(body)).expires_in).toBe(60);
  });

  it('expires_in is a string of digits for a client with expiresInAsString (spec sample)', () => {
    const body = providerBody();
    shapeTokenResponse(body, { client: client({ expiresInAsString: true }), profile: v2 });
    expect(body.expires_in).toBe('60');
    expect(body.expires_in).toMatch(/^\d+$/);
    const v1Body = providerBody({ scope: 'EmployeeBadge openid' });
    shapeTokenResponse(v1Body, { client: client({ expiresInAsString: true }), profile: v1 });
    expect(v1Body.expires_in).toBe('60');
  });

  it('the whole body has exactly the D3 fields', () => {
    const body = providerBody();
    shapeTokenResponse(body, { client: client(), profile: v2 });
    expect(body).toEqual({
      id_token: ID_TOKEN,
      access_token: ID_TOKEN,
      token_type: 'Bearer',
      expires_in: 60,
      scope: 'openid issue.EmployeeBadge',
    });
  });
});

describe('D3 + spec Scope format: the scope echoed in the token response', () => {
  it('Version 1 issuance: scope without openid (Version 1 issuance scope must not contain openid)', () => {
    const body = providerBody({ scope: 'openid issue.EmployeeBadge' });
    shapeTokenResponse(body, { client: client(), profile: v1 });
    expect(body.scope).toBe('issue.EmployeeBadge');
  });

  it('Version 1 issuance without openid stays as it is', () => {
    const body = providerBody({ scope: 'issue.EmployeeBadge' });
    shapeTokenResponse(body, { client: client(), profile: v1 });
    expect(body.scope).toBe('issue.EmployeeBadge');
  });

  it('Version 1 verification: scope untouched (verification must contain openid)', () => {
    const body = providerBody({ scope: 'openid EmployeeBadge' });
    shapeTokenResponse(body, { client: client(), profile: v1 });
    expect(body.scope).toBe('openid EmployeeBadge');
  });

  it.each(['openid issue.EmployeeBadge', 'openid EmployeeBadge'])('Version 2: scope %j untouched', (scope) => {
    const body = providerBody({ scope });
    shapeTokenResponse(body, { client: client(), profile: v2 });
    expect(body.scope).toBe(scope);
  });
});
