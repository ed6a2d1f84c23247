import { describe, it, expect } from 'vitest';
import { discoveryDocument } from '../../../src/oidc/discovery.js';
import { versionProfiles } from '../../../src/oidc/versions.js';

const base = 'https://vc.example.com';
const { v1, v2 } = versionProfiles(base);

/**
 * The fields of the spec's table "OpenID configuration document", plus `code_challenge_methods_supported`
 * (RFC 8414), which src/oidc/discovery.ts adds where PKCE is accepted (Version 2 and the Version 1
 * non-PAR set; the Version 1 PAR set has no code_challenge).
 */
const TABLE_FIELDS = [
  'pushed_authorization_request_endpoint',
  'authorization_endpoint',
  'token_endpoint',
  'jwks_uri',
  'response_modes_supported',
  'id_token_signing_alg_values_supported',
  'response_types_supported',
  'require_pushed_authorization_requests',
  'issuer',
  'grant_types_supported',
  'token_endpoint_auth_methods_supported',
  'subject_types_supported',
  'request_parameter_supported',
];

describe('spec: OpenID configuration document, Version 2 (GET /v2.0/.well-known/openid-configuration)', () => {
  const doc = discoveryDocument(v2, base);

  it('has exactly the table values for Version 2', () => {
    expect(doc).toEqual({
      issuer: 'https://vc.example.com', // D1: Version 2 issuer is {base_url}
      pushed_authorization_request_endpoint: 'https://vc.example.com/v2.0/oidc/par',
      authorization_endpoint: 'https://vc.example.com/v2.0/oidc/authorize',
      token_endpoint: 'https://vc.example.com/v2.0/oidc/token',
      userinfo_endpoint: 'https://vc.example.com/v2.0/oidc/userinfo', // OIDC Core 5.3, an addition
      userinfo_signing_alg_values_supported: ['RS256'],
      jwks_uri: 'https://vc.example.com/v2.0/.well-known/openid-configuration/jwks',
      response_modes_supported: ['query'],
      id_token_signing_alg_values_supported: ['RS256'],
      response_types_supported: ['code'],
      require_pushed_authorization_requests: false,
      grant_types_supported: ['authorization_code'],
      token_endpoint_auth_methods_supported: ['client_secret_post', 'client_secret_basic'],
      authorization_response_iss_parameter_supported: true, // RFC 9207 §2.3
      subject_types_supported: ['public'],
      request_parameter_supported: false,
      code_challenge_methods_supported: ['S256', 'plain'],
    });
  });

  it('carries every field of the table', () => {
    for (const field of TABLE_FIELDS) expect(doc, field).toHaveProperty(field);
  });

  it('issuer equals {base_url} (D1)', () => {
    expect(doc.issuer).toBe(base);
  });

  it('does not require PAR (non-PAR is allowed in Version 2)', () => {
    expect(doc.require_pushed_authorization_requests).toBe(false);
  });
});

describe('spec: OpenID configuration document, Version 1 PAR document (GET /oidc/.well-known/openid-configuration)', () => {
  const doc = discoveryDocument(v1, base, 'par');

  it('has exactly the table values for the Version 1 PAR document', () => {
    expect(doc).toEqual({
      issuer: 'https://vc.example.com/oidc', // D1: Version 1 issuer is {base_url}/oidc
      pushed_authorization_request_endpoint: 'https://vc.example.com/oidc/par',
      authorization_endpoint: 'https://vc.example.com/oidc/authorize',
      token_endpoint: 'https://vc.example.com/oidc/token',
      userinfo_endpoint: 'https://vc.example.com/oidc/userinfo', // OIDC Core 5.3, an addition
      userinfo_signing_alg_values_supported: ['RS256'],
      jwks_uri: 'https://vc.example.com/oidc/.well-known/openid-configuration/jwks',
      response_modes_supported: ['query'],
      id_token_signing_alg_values_supported: ['RS256'],
      response_types_supported: ['code'],
      require_pushed_authorization_requests: true,
      grant_types_supported: ['authorization_code'],
      token_endpoint_auth_methods_supported: ['client_secret_post', 'client_secret_basic'],
      authorization_response_iss_parameter_supported: true, // RFC 9207 §2.3
    });
  });

  it('is the default kind', () => {
    expect(discoveryDocument(v1, base)).toEqual(doc);
  });

  it('has no subject_types_supported or request_parameter_supported (spec: Version 1 PAR set)', () => {
    expect(doc).not.toHaveProperty('subject_types_supported');
    expect(doc).not.toHaveProperty('request_parameter_supported');
  });

  it('requires PAR', () => {
    expect(doc.require_pushed_authorization_requests).toBe(true);
  });

  it('does not advertise PKCE (spec: Version 1 PAR has no code_challenge)', () => {
    expect(doc).not.toHaveProperty('code_challenge_methods_supported');
  });
});

describe('spec: OpenID configuration document, Version 1 root document (GET /.well-known/openid-configuration)', () => {
  const doc = discoveryDocument(v1, base, 'root');

  it('has exactly the table values for the Version 1 root document', () => {
    expect(doc).toEqual({
      issuer: 'https://vc.example.com/oidc', // spec: root document issuer is {base_url}/oidc
      authorization_endpoint: 'https://vc.example.com/oidc/authorizev1',
      token_endpoint: 'https://vc.example.com/oidc/token',
      userinfo_endpoint: 'https://vc.example.com/oidc/userinfo', // OIDC Core 5.3, an addition
      userinfo_signing_alg_values_supported: ['RS256'],
      jwks_uri: 'https://vc.example.com/.well-known/openid-configuration/jwks',
      response_modes_supported: ['query'],
      id_token_signing_alg_values_supported: ['RS256'],
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code'],
      token_endpoint_auth_methods_supported: ['client_secret_post', 'client_secret_basic'],
      authorization_response_iss_parameter_supported: true, // RFC 9207 §2.3
      subject_types_supported: ['public'],
      request_parameter_supported: false,
      code_challenge_methods_supported: ['S256', 'plain'],
    });
  });

  it('has no PAR endpoint and no require_pushed_authorization_requests', () => {
    expect(doc).not.toHaveProperty('pushed_authorization_request_endpoint');
    expect(doc).not.toHaveProperty('require_pushed_authorization_requests');
  });

  it('advertises PKCE, which Version 1 non-PAR requires (D5)', () => {
    expect(doc.code_challenge_methods_supported).toEqual(['S256', 'plain']);
  });
});

describe('D1: every document URL lives under the configured base URL', () => {
  it('builds the URLs from a base URL with a path', () => {
    const tenant = 'https://host.example/tenant';
    const p = versionProfiles(tenant);
    expect(discoveryDocument(p.v2, tenant)).toMatchObject({
      issuer: tenant,
      token_endpoint: `${tenant}/v2.0/oidc/token`,
    });
    expect(discoveryDocument(p.v1, tenant, 'root')).toMatchObject({
      issuer: `${tenant}/oidc`,
      authorization_endpoint: `${tenant}/oidc/authorizev1`,
    });
  });

  it('the Version 2 and Version 1 issuers differ, so a token from one version is never accepted as the other', () => {
    expect(discoveryDocument(v2, base).issuer).not.toBe(discoveryDocument(v1, base).issuer);
    expect(discoveryDocument(v1, base, 'par').issuer).toBe(discoveryDocument(v1, base, 'root').issuer);
  });
});

describe('versions (the operator settings): discovery from the issuer, OIDC Discovery 1.0 section 4', () => {
  it('v2Issuer v2.0: the Version 2 document says {base_url}/v2.0, where it lives; Version 1 is unchanged', () => {
    const p = versionProfiles(base, { v1: true, v2Issuer: 'v2.0' });
    expect(discoveryDocument(p.v2, base).issuer).toBe(`${base}/v2.0`);
    expect(p.v2.paths.discovery).toBe('/v2.0/.well-known/openid-configuration');
    expect(p.v2.legacyIssuer).toBe(`${base}/oidc`); // D1: the sample's value, for flagged clients
    expect(discoveryDocument(p.v1, base, 'root').issuer).toBe(`${base}/oidc`);
    expect(p.v2.paths.issuerDiscovery).toBeUndefined();
  });

  it('v1 false: Version 1 is not served, and Version 2 answers at the root', () => {
    const p = versionProfiles(base, { v1: false, v2Issuer: 'base' });
    expect(p.v1.served).toBe(false);
    expect(p.v2.paths.issuerDiscovery).toBe('/.well-known/openid-configuration');
  });

  it('both: the root would name another issuer, so Version 2 does not answer there', () => {
    const p = versionProfiles(base, { v1: false, v2Issuer: 'v2.0' });
    expect(p.v2.paths.issuerDiscovery).toBeUndefined();
  });

  it('v1ParDocument oidc-discovery: the Version 1 PAR document carries subject_types_supported (OIDC Discovery 3)', () => {
    const doc = discoveryDocument(versionProfiles(base, { v1ParDocument: 'oidc-discovery' }).v1, base, 'par');
    expect(doc.subject_types_supported).toEqual(['public']);
    // nothing else of the fuller documents: no PKCE in Version 1 PAR
    expect(doc).not.toHaveProperty('code_challenge_methods_supported');
    expect(doc).not.toHaveProperty('request_parameter_supported');
  });

  it('the defaults are the interface: both served, Version 2 issuer {base_url}', () => {
    const p = versionProfiles(base);
    expect([p.v1.served, p.v2.served, p.v2.issuer]).toEqual([true, true, base]);
  });
});
