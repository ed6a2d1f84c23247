import { describe, it, expect } from 'vitest';
import { mapProviderError, toProtocolError } from '../../../src/oidc/errorMapping.js';
import { ProtocolError } from '../../../src/rules/errors.js';

describe('D4 + spec Errors: failed client authentication at PAR and token', () => {
  it.each(['par', 'token'] as const)('%s: invalid_client becomes unauthorised_client with status 400', (site) => {
    const m = mapProviderError(site, 'invalid_client', 'client authentication failed', undefined, false);
    expect(m.error).toBe('unauthorised_client');
    expect(m.status).toBe(400);
    expect(m.description).toMatch(/client_id|client_secret/);
  });

  it('token: stays invalid_client when the deployment asked for RFC 6749 codes', () => {
    const m = mapProviderError('token', 'invalid_client', 'client authentication failed', undefined, true);
    expect(m.error).toBe('invalid_client');
    // no forced status: the provider's own 401 (with WWW-Authenticate) stands
    expect(m.status).toBeUndefined();
  });

  it('par: stays invalid_client when the deployment asked for RFC 6749 codes (D4)', () => {
    // BUG (src/oidc/errorMapping.ts): the authorize/par branch maps invalid_client to invalid_request
    // ("client_id is not a registered client") when rfc6749 is true.
    const m = mapProviderError('par', 'invalid_client', 'client authentication failed', undefined, true);
    expect(m.error).toBe('invalid_client');
    expect(m.status).toBeUndefined();
  });
});

describe('spec Token errors: ClientId "Does not match the code request" -> invalid_client', () => {
  it("turns oidc-provider's invalid_grant 'client mismatch' into invalid_client, status 400", () => {
    const m = mapProviderError('token', 'invalid_grant', 'grant request is invalid', 'client mismatch', false);
    expect(m).toEqual({ error: 'invalid_client', description: expect.stringContaining('client_id'), status: 400 });
  });

  it('with RFC 6749 codes it stays invalid_grant (RFC 6749 5.2: a grant issued to another client), naming client_id', () => {
    const m = mapProviderError('token', 'invalid_grant', 'grant request is invalid', 'client mismatch', true);
    expect(m.error).toBe('invalid_grant');
    expect(m.description).toContain('client_id');
  });
});

describe('D4: invalid_grant at the token endpoint names the parameter', () => {
  it.each([
    ['authorization code not found', 'code'],
    ['authorization code is expired', 'code'],
    ['authorization code already consumed', 'code'],
    ['grant not found', 'code'],
    ['grant is expired', 'code'],
    ['authorization code invalid (referenced account not found)', 'code'],
    ['authorization code redirect_uri mismatch', 'redirect_uri'],
    ['PKCE verification failed', 'code_verifier'],
    // oidc-provider 9's PKCE causes (checkPKCE)
    ['code_verifier does not match code_challenge', 'code_verifier'],
    ['code_verifier must be provided', 'code_verifier'],
  ])("detail %j -> invalid_grant whose description names '%s'", (detail, parameter) => {
    const m = mapProviderError('token', 'invalid_grant', 'grant request is invalid', detail, false);
    expect(m.error).toBe('invalid_grant');
    expect(m.status).toBeUndefined();
    expect(m.description.split(/[\s:]+/)).toContain(parameter);
    // the generic oidc-provider text is replaced
    expect(m.description).not.toBe('grant request is invalid');
  });

  it('a replayed code says the tokens it issued are revoked (D16)', () => {
    const m = mapProviderError(
      'token',
      'invalid_grant',
      'grant request is invalid',
      'authorization code already consumed',
      false,
    );
    expect(m.description).toMatch(/already been used/);
    expect(m.description).toMatch(/revoked/);
  });

  it('an invalid_grant without detail (a lost concurrent redemption) says the code is invalid or used', () => {
    const m = mapProviderError('token', 'invalid_grant', 'grant request is invalid', undefined, false);
    expect(m).toEqual({ error: 'invalid_grant', description: 'code is invalid, expired or already used' });
  });

  it('keeps a specific description it does not know', () => {
    const m = mapProviderError('token', 'invalid_grant', 'something specific', 'unknown detail', false);
    expect(m).toEqual({ error: 'invalid_grant', description: 'something specific' });
  });
});

describe('spec Errors, PAR authorise: client_id / request_uri / RedirectUri -> 400 invalid_request', () => {
  it('an unknown client at authorize is invalid_request naming client_id', () => {
    const m = mapProviderError('authorize', 'invalid_client', 'client is invalid', 'client not found', false);
    expect(m.error).toBe('invalid_request');
    expect(m.description).toContain('client_id');
  });

  it('an unknown client at authorize is invalid_request with RFC 6749 codes too', () => {
    expect(mapProviderError('authorize', 'invalid_client', 'client is invalid', undefined, true).error).toBe(
      'invalid_request',
    );
  });

  it('an invalid request_uri is invalid_request naming request_uri', () => {
    const m = mapProviderError(
      'authorize',
      'invalid_request_uri',
      'request_uri is invalid, expired, or was already used',
      undefined,
      false,
    );
    expect(m).toEqual({
      error: 'invalid_request',
      description: 'request_uri: request_uri is invalid, expired, or was already used',
    });
  });

  it('an unregistered redirect_uri is invalid_request naming redirect_uri', () => {
    const m = mapProviderError(
      'authorize',
      'invalid_redirect_uri',
      "redirect_uri did not match any of the client's registered redirect_uris",
      undefined,
      false,
    );
    expect(m.error).toBe('invalid_request');
    expect(m.description).toContain('redirect_uri');
  });

  it('an invalid request object is invalid_request', () => {
    expect(mapProviderError('authorize', 'invalid_request_object', 'bad', undefined, false)).toEqual({
      error: 'invalid_request',
      description: 'bad',
    });
  });

  it('PAR: an unregistered redirect_uri is invalid_request (spec PAR errors, RedirectUri)', () => {
    expect(mapProviderError('par', 'invalid_redirect_uri', 'x', undefined, false).error).toBe('invalid_request');
  });
});

describe('D4: codes that are already the spec codes pass through', () => {
  it.each([
    ['authorize', 'invalid_scope'],
    ['authorize', 'unsupported_response_type'],
    ['par', 'invalid_request'],
    ['token', 'unsupported_grant_type'],
    ['token', 'invalid_request'],
  ] as const)('%s: %s stays with its description', (site, error) => {
    expect(mapProviderError(site, error, 'as given', undefined, false)).toEqual({ error, description: 'as given' });
  });

  it('a missing description is filled in, never empty or undefined (D4: every error carries a description)', () => {
    expect(mapProviderError('token', 'invalid_request', undefined, undefined, false).description).toBe(
      'invalid request',
    );
  });
});

describe('toProtocolError', () => {
  it('uses the mapped status when there is one, else the provider status', () => {
    const a = toProtocolError({ error: 'unauthorised_client', description: 'd', status: 400 }, 401);
    expect(a).toBeInstanceOf(ProtocolError);
    expect(a.status).toBe(400);
    expect(a.toJSON()).toEqual({ error: 'unauthorised_client', error_description: 'd' });
    expect(toProtocolError({ error: 'invalid_client', description: 'd' }, 401).status).toBe(401);
  });
});
