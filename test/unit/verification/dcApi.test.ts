import { describe, expect, it } from 'vitest';
import { dcApiRequestPayload, dcApiResponseMode, originAudience } from '../../../src/verification/dcApi.js';

/** OpenID4VP 1.0 Appendix A.2, A.3, A.4 as pure functions: what each request carries, and the answer's audience. */
const input = {
  clientId: 'x509_hash:abc',
  origin: 'https://vc.example',
  responseMode: 'direct_post.jwt' as const,
  encryptionKey: { kty: 'EC', crv: 'P-256', x: 'x', y: 'y', kid: 'k', use: 'enc', alg: 'ECDH-ES' },
  nonce: 'n-1',
  dcqlQuery: { credentials: [{ id: 'EmployeeBadge', format: 'dc+sd-jwt', meta: { vct_values: ['v'] } }] },
  issuedAt: 1_000,
  expiresAt: 1_300,
};

describe('the Digital Credentials API requests', () => {
  it('unsigned: no client_id, no expected_origins, no response_uri or state; the key and the query', () => {
    const p = dcApiRequestPayload(input, false);
    expect(p).toMatchObject({ response_type: 'vp_token', response_mode: 'dc_api.jwt', nonce: 'n-1' });
    expect(p.dcql_query).toEqual(input.dcqlQuery);
    expect((p.client_metadata as { jwks: unknown }).jwks).toEqual({ keys: [input.encryptionKey] });
    for (const name of ['client_id', 'expected_origins', 'response_uri', 'state', 'aud'])
      expect(p).not.toHaveProperty(name);
  });

  it('signed: the client_id with its prefix, the origin expected, the static audience and times', () => {
    expect(dcApiRequestPayload(input, true)).toMatchObject({
      client_id: 'x509_hash:abc',
      expected_origins: ['https://vc.example'],
      aud: 'https://self-issued.me/v2',
      iat: 1_000,
      exp: 1_300,
    });
  });

  it('dc_api.jwt for encrypted answers, dc_api for plain ones; the audience is the origin', () => {
    expect(dcApiResponseMode('direct_post.jwt')).toBe('dc_api.jwt');
    expect(dcApiResponseMode('direct_post')).toBe('dc_api');
    const plain = dcApiRequestPayload({ ...input, responseMode: 'direct_post', encryptionKey: undefined }, false);
    expect(plain.response_mode).toBe('dc_api');
    expect(plain.client_metadata).not.toHaveProperty('jwks');
    expect(originAudience('https://vc.example')).toBe('origin:https://vc.example');
  });
});
