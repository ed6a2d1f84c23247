import { describe, it, expect } from 'vitest';
import type { ClientConfig } from '../../../src/config/schema.js';
import {
  authenticateClient,
  basicCredentials,
  clientCredentialsForm,
  MAX_BASIC_HEADER,
} from '../../../src/rules/clientAuth.js';
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
    ['missing', undefined, 'client_secret is missing'],
    ['empty', '', 'client_secret is missing'],
    ['not a string', [SECRET], 'client_secret is missing'],
    ['wrong', 'hr-portal-secret-0123456780', 'client_secret is wrong'],
    ['a prefix of the secret', SECRET.slice(0, 10), 'client_secret is wrong'],
    ['the secret with a suffix', `${SECRET}x`, 'client_secret is wrong'],
  ])(
    'refuses a %s client_secret without revealing it, naming the cause (spec: Errors, ClientSecret; D4)',
    (_, secret, cause) => {
      const e = expectProtocolError(
        () => authenticateClient({ client_id: 'hr-portal', client_secret: secret }, clients),
        'unauthorised_client',
        `client authentication failed: ${cause}`,
      );
      expect(e.description).not.toContain(SECRET);
    },
  );
});

const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');

describe('RFC 6749 2.3.1 / RFC 7617: basicCredentials', () => {
  it('decodes the form-urlencoded id and secret', () => {
    const header = `Basic ${b64(`${encodeURIComponent('a b:c')}:${encodeURIComponent('p+q%r é')}`)}`;
    expect(basicCredentials(header)).toEqual({ clientId: 'a b:c', secret: 'p+q%r é' });
    // "+" is a space in application/x-www-form-urlencoded (Appendix B)
    expect(basicCredentials(`Basic ${b64('a+b:c+d')}`)).toEqual({ clientId: 'a b', secret: 'c d' });
  });

  it('takes the scheme case-insensitively, unpadded base64 too, and splits at the first colon', () => {
    expect(basicCredentials(`BASIC ${b64('id:se:cret').replace(/=+$/, '')}`)).toEqual({
      clientId: 'id',
      secret: 'se:cret',
    });
  });

  it.each([
    ['another scheme', `Bearer ${b64('id:secret')}`, 'Basic scheme'],
    ['a scheme with a bad character', 'Ba(sic x', 'Basic scheme'],
    ['no credentials', 'Basic ', 'no credentials'],
    ['characters outside base64', 'Basic a*b=', 'base64'],
    ['base64url', `Basic ${Buffer.from([0xfb, 0xef, 0x3a, 0x3f]).toString('base64url')}`, 'base64'],
    ['non-canonical trailing bits', 'Basic YR==', 'base64'],
    ['not UTF-8', `Basic ${b64(Buffer.from([0xc3, 0x28, 0x3a, 0x41]))}`, 'UTF-8'],
    ['no colon', `Basic ${b64('idsecret')}`, 'no colon'],
    [
      'a bad escape in the id',
      `Basic ${b64('%zz:secret')}`,
      'client_id is not valid application/x-www-form-urlencoded',
    ],
    ['an escape of invalid UTF-8 in the secret', `Basic ${b64('id:%C3%28')}`, 'client_secret is not valid'],
    ['an empty id', `Basic ${b64(':secret')}`, 'empty client_id'],
    ['an empty secret', `Basic ${b64('id:')}`, 'empty client_secret'],
    ['an over-long header', `Basic ${'A'.repeat(MAX_BASIC_HEADER)}`, `longer than ${MAX_BASIC_HEADER}`],
  ])('refuses %s with unauthorised_client and its own description, never the credentials', (_, header, fragment) => {
    const e = expectProtocolError(() => basicCredentials(header), 'unauthorised_client', fragment);
    expect(e.description).not.toContain('secret:');
    const credentials = header.slice(6, 20);
    if (credentials.trim()) expect(e.description).not.toContain(credentials);
  });
});

describe('RFC 6749 2.3: clientCredentialsForm, one method per request', () => {
  const header = `Basic ${b64(`hr-portal:${SECRET}`)}`;

  it('turns client_secret_basic into the form oidc-provider authenticates (client_secret_post)', () => {
    const form = clientCredentialsForm({ code: 'c' }, header);
    expect(form).toEqual({ code: 'c', client_id: 'hr-portal', client_secret: SECRET });
    expect(authenticateClient(form, clients)).toBe(client);
  });

  it('leaves a client_secret_post form as it is', () => {
    const params = { client_id: 'hr-portal', client_secret: SECRET };
    expect(clientCredentialsForm(params, undefined)).toBe(params);
  });

  it('refuses a secret in both places with invalid_request', () => {
    expectProtocolError(
      () => clientCredentialsForm({ client_secret: SECRET }, header),
      'invalid_request',
      'one method only',
    );
  });

  it('refuses a form client_id that is not the header one with invalid_request', () => {
    expectProtocolError(() => clientCredentialsForm({ client_id: 'x' }, header), 'invalid_request', 'client_id');
    expect(clientCredentialsForm({ client_id: 'hr-portal' }, header).client_secret).toBe(SECRET);
  });

  it('names client_assertion as unsupported', () => {
    expectProtocolError(
      () => clientCredentialsForm({ client_id: 'hr-portal', client_assertion: 'x' }, undefined),
      'unauthorised_client',
      'client_assertion',
    );
  });
});
