import { describe, it, expect } from 'vitest';
import type { ClientConfig } from '../../../src/config/schema.js';
import { authenticateClient } from '../../../src/rules/clientAuth.js';
import { expectProtocolError } from './helpers.js';

const SECRET = 'hr-portal-secret-0123456789';
const client: ClientConfig = {
  clientId: 'hr-portal',
  clientSecret: SECRET,
  redirectUris: ['https://hr.example.com/callback'],
  pkce: 'optional',
  pkceMethods: ['S256', 'plain'],
  scopes: ['issue.EmployeeBadge'],
  expiresInAsString: false,
  legacyV2Issuer: false,
  vcIssuerClaim: false,
};
const clients: ReadonlyMap<string, ClientConfig> = new Map([[client.clientId, client]]);

describe('spec: Authentication 1, client_secret_post (D4: unauthorised_client, 400)', () => {
  it('returns the client for a registered client_id with its secret (spec: Authentication 1)', () => {
    expect(authenticateClient({ client_id: 'hr-portal', client_secret: SECRET }, clients)).toBe(client);
  });

  it.each([undefined, '', 42])('refuses a missing client_id %j (spec: Endpoints, client_id Required)', (id) => {
    expectProtocolError(
      () => authenticateClient({ client_id: id, client_secret: SECRET }, clients),
      'unauthorised_client',
      'client_id is required',
    );
  });

  it('refuses an unregistered client_id (spec: Errors, ClientId "Client not registered")', () => {
    expectProtocolError(
      () => authenticateClient({ client_id: 'nobody', client_secret: SECRET }, clients),
      'unauthorised_client',
      'client_id is not a registered client',
    );
  });

  it('refuses inherited property names as client ids', () => {
    expectProtocolError(
      () => authenticateClient({ client_id: 'constructor', client_secret: SECRET }, clients),
      'unauthorised_client',
      'client_id',
    );
  });
});

describe('spec: Errors, ClientSecret "Client authentication fails" -> unauthorised_client', () => {
  it.each([
    ['missing', undefined],
    ['empty', ''],
    ['wrong', 'hr-portal-secret-0123456780'],
    ['a prefix of the secret', SECRET.slice(0, 10)],
    ['the secret with a suffix', `${SECRET}x`],
    ['not a string', [SECRET]],
  ])('refuses a %s client_secret without revealing it (spec: Errors, ClientSecret; D4)', (_, secret) => {
    const e = expectProtocolError(
      () => authenticateClient({ client_id: 'hr-portal', client_secret: secret }, clients),
      'unauthorised_client',
      'client authentication failed: client_secret is missing or wrong',
    );
    expect(e.description).not.toContain(SECRET);
  });
});
