import {
  getOpenid4vpClientId,
  validateOpenid4vpAuthorizationRequestPayload,
  zClientMetadata,
} from '@openid4vc/openid4vp';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { describe, expect, it } from 'vitest';
import { dcqlQueryFor } from '../../../src/verification/dcql.js';
import {
  authorizationRequestPayload,
  clientMetadata,
  unsignedRequestObject,
  walletUriFor,
} from '../../../src/verification/requestObject.js';

const responseUri = 'https://vc.example.com/vp/response';
const clientId = `redirect_uri:${responseUri}`;
const payload = authorizationRequestPayload({
  clientId,
  responseUri,
  responseMode: 'direct_post',
  nonce: 'nonce-1',
  state: 'state-1',
  dcqlQuery: dcqlQueryFor(
    [{ name: 'EmployeeBadge', validity: 'P365D', attributes: { FirstName: { type: 'string', required: true } } }],
    'https://vc.example.com',
  ),
  issuedAt: 1_700_000_000,
  expiresAt: 1_700_000_300,
});

describe('the request object', () => {
  it('is an unsigned JWT typed oauth-authz-req+jwt', () => {
    const jwt = unsignedRequestObject(payload);
    expect(jwt.endsWith('.')).toBe(true);
    expect(decodeProtectedHeader(jwt)).toEqual({ alg: 'none', typ: 'oauth-authz-req+jwt' });
    expect(decodeJwt(jwt)).toEqual(payload);
  });

  it('carries a direct_post DCQL request with client_metadata for dc+sd-jwt', () => {
    expect(payload).toMatchObject({
      aud: 'https://self-issued.me/v2', // §5.8, static discovery
      response_type: 'vp_token',
      response_mode: 'direct_post',
      client_id: clientId,
      response_uri: responseUri,
      nonce: 'nonce-1',
      state: 'state-1',
      dcql_query: { credentials: [{ id: 'EmployeeBadge', format: 'dc+sd-jwt' }] },
      client_metadata: {
        vp_formats_supported: {
          'dc+sd-jwt': { 'sd-jwt_alg_values': ['ES256', 'EdDSA'], 'kb-jwt_alg_values': ['ES256', 'EdDSA'] },
          mso_mdoc: { issuerauth_alg_values: [-7, -35, -36, -8], deviceauth_alg_values: [-7, -35, -36, -8] },
        },
      },
    });
    expect(payload.client_metadata).not.toHaveProperty('jwks'); // direct_post: nothing to encrypt to
    expect(payload).not.toHaveProperty('redirect_uri'); // §8.2: not with response_uri
  });

  it('passes the checks of @openid4vc/openid4vp', () => {
    expect(() => validateOpenid4vpAuthorizationRequestPayload({ params: payload as never })).not.toThrow();
    expect(() => zClientMetadata.parse(clientMetadata())).not.toThrow();
    expect(getOpenid4vpClientId({ clientId, responseMode: 'direct_post' })).toMatchObject({
      clientIdPrefix: 'redirect_uri',
      clientIdIdentifier: responseUri,
    });
  });

  it('is referenced by an openid4vp:// link carrying only client_id, request_uri and request_uri_method=post (§5.10)', () => {
    const link = new URL(walletUriFor(clientId, 'https://vc.example.com/vp/request/abc'));
    expect(link.protocol).toBe('openid4vp:');
    expect([...link.searchParams.keys()]).toEqual(['client_id', 'request_uri', 'request_uri_method']);
    expect(link.searchParams.get('request_uri_method')).toBe('post');
    expect(link.searchParams.get('client_id')).toBe(clientId);
    expect(link.searchParams.get('request_uri')).toBe('https://vc.example.com/vp/request/abc');
  });
});

describe('OpenID4VP 1.0 §5.1 verifier_info (issue 50: the relying party registration certificate)', () => {
  const info = [{ format: 'registration_cert', data: 'eyJhbGciOiJFUzI1NiJ9.e30.c2ln' }];

  it('is carried when given, and validates as the holder library reads it', () => {
    const withInfo = authorizationRequestPayload({
      clientId,
      responseUri,
      responseMode: 'direct_post',
      nonce: 'nonce-1',
      state: 'state-1',
      dcqlQuery: payload.dcql_query,
      verifierInfo: info,
      issuedAt: 1_700_000_000,
      expiresAt: 1_700_000_300,
    });
    expect(withInfo.verifier_info).toEqual(info);
    expect(() => validateOpenid4vpAuthorizationRequestPayload({ params: withInfo as never })).not.toThrow();
  });

  it('is left out without one', () => {
    expect(payload).not.toHaveProperty('verifier_info');
  });
});
