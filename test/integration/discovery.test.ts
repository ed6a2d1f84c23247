/**
 * Spec "OpenID configuration document" table, for the three documents the service publishes:
 * Version 2 (/v2.0/.well-known/openid-configuration), the Version 1 PAR document
 * (/oidc/.well-known/openid-configuration) and the Version 1 root document
 * (/.well-known/openid-configuration); issuers per D1. Each document's jwks_uri serves public RS256 keys.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';

let svc: TestService;
let url: string;

beforeAll(async () => {
  svc = await startTestService();
  url = svc.url;
});
afterAll(async () => {
  await svc?.stop();
});

async function getJson(path: string): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(`${url}${path}`);
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, body, headers: res.headers };
}

interface DocCase {
  name: string;
  path: string;
  /** every field of the spec's table, with its exact value; `undefined` = must be absent */
  expected: (base: string) => Record<string, unknown>;
}

const DOCS: DocCase[] = [
  {
    name: 'Version 2 document',
    path: '/v2.0/.well-known/openid-configuration',
    expected: (b) => ({
      pushed_authorization_request_endpoint: `${b}/v2.0/oidc/par`,
      authorization_endpoint: `${b}/v2.0/oidc/authorize`,
      token_endpoint: `${b}/v2.0/oidc/token`,
      jwks_uri: `${b}/v2.0/.well-known/openid-configuration/jwks`,
      response_modes_supported: ['query'],
      id_token_signing_alg_values_supported: ['RS256'],
      response_types_supported: ['code'],
      require_pushed_authorization_requests: false,
      issuer: b,
      grant_types_supported: ['authorization_code'],
      token_endpoint_auth_methods_supported: ['client_secret_post', 'client_secret_basic'],
      subject_types_supported: ['public'],
      request_parameter_supported: false,
    }),
  },
  {
    name: 'Version 1 PAR document',
    path: '/oidc/.well-known/openid-configuration',
    expected: (b) => ({
      pushed_authorization_request_endpoint: `${b}/oidc/par`,
      authorization_endpoint: `${b}/oidc/authorize`,
      token_endpoint: `${b}/oidc/token`,
      jwks_uri: `${b}/oidc/.well-known/openid-configuration/jwks`,
      response_modes_supported: ['query'],
      id_token_signing_alg_values_supported: ['RS256'],
      response_types_supported: ['code'],
      require_pushed_authorization_requests: true,
      issuer: `${b}/oidc`,
      grant_types_supported: ['authorization_code'],
      token_endpoint_auth_methods_supported: ['client_secret_post', 'client_secret_basic'],
      subject_types_supported: undefined,
      request_parameter_supported: undefined,
    }),
  },
  {
    name: 'Version 1 root document',
    path: '/.well-known/openid-configuration',
    expected: (b) => ({
      pushed_authorization_request_endpoint: undefined,
      authorization_endpoint: `${b}/oidc/authorizev1`,
      token_endpoint: `${b}/oidc/token`,
      jwks_uri: `${b}/.well-known/openid-configuration/jwks`,
      response_modes_supported: ['query'],
      id_token_signing_alg_values_supported: ['RS256'],
      response_types_supported: ['code'],
      require_pushed_authorization_requests: undefined,
      issuer: `${b}/oidc`,
      grant_types_supported: ['authorization_code'],
      token_endpoint_auth_methods_supported: ['client_secret_post', 'client_secret_basic'],
      subject_types_supported: ['public'],
      request_parameter_supported: false,
    }),
  },
];

/** The table's rows, in its order; each row is checked on every document. */
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
] as const;

describe.each(DOCS)('OpenID configuration document / $name', ({ path, expected }) => {
  it('Endpoints: GET answers 200 application/json', async () => {
    const res = await getJson(path);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(typeof res.body).toBe('object');
  });

  it.each(TABLE_FIELDS)(
    'OpenID configuration document / %s has the exact value of the table (or is absent where the table says so)',
    async (field) => {
      const { body } = await getJson(path);
      const want = expected(url)[field];
      if (want === undefined) expect(Object.hasOwn(body, field), `${field} must be absent`).toBe(false);
      else expect(body[field]).toEqual(want);
    },
  );

  it('OpenID configuration document / jwks_uri serves a JWKS of public RSA keys (kid, alg RS256, no private members)', async () => {
    const { body } = await getJson(path);
    const jwksUri = new URL(body.jwks_uri as string);
    expect(jwksUri.origin).toBe(new URL(url).origin);
    const res = await getJson(jwksUri.pathname);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(Array.isArray(res.body.keys)).toBe(true);
    expect(res.body.keys.length).toBeGreaterThan(0);
    for (const key of res.body.keys) {
      expect(key.kty).toBe('RSA');
      expect(typeof key.kid).toBe('string');
      expect(key.kid.length).toBeGreaterThan(0);
      expect(key.alg).toBe('RS256');
      expect(typeof key.n).toBe('string');
      expect(typeof key.e).toBe('string');
      for (const priv of ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k']) {
        expect(Object.hasOwn(key, priv), `private member ${priv} must not be published`).toBe(false);
      }
    }
  });

  it('OpenID configuration document / every endpoint URI is absolute and under the base URL', async () => {
    const { body } = await getJson(path);
    for (const field of [
      'pushed_authorization_request_endpoint',
      'authorization_endpoint',
      'token_endpoint',
      'jwks_uri',
    ]) {
      if (body[field] === undefined) continue;
      expect(String(body[field]).startsWith(`${url}/`)).toBe(true);
    }
  });
});

describe.each(DOCS)('Additions beyond the interface / $name', ({ path }) => {
  it('RFC 9207 2.3: authorization_response_iss_parameter_supported is true (every redirect carries iss)', async () => {
    const { body } = await getJson(path);
    expect(body.authorization_response_iss_parameter_supported).toBe(true);
  });
});

describe('OpenID configuration document / D1 issuers', () => {
  it('D1: Version 2 issuer is {base_url}; both Version 1 documents share issuer {base_url}/oidc', async () => {
    const [v2, v1Par, v1Root] = await Promise.all(DOCS.map((d) => getJson(d.path)));
    expect(v2.body.issuer).toBe(url);
    expect(v1Par.body.issuer).toBe(`${url}/oidc`);
    expect(v1Root.body.issuer).toBe(v1Par.body.issuer);
  });

  it('OpenID configuration document / every jwks_uri serves the same key set (one signing key set for all versions)', async () => {
    const sets = await Promise.all(
      DOCS.map(async (d) => {
        const { body } = await getJson(d.path);
        return (await getJson(new URL(body.jwks_uri).pathname)).body;
      }),
    );
    const kids = sets.map((s) => (s.keys as { kid: string }[]).map((k) => k.kid).sort());
    expect(kids[1]).toEqual(kids[0]);
    expect(kids[2]).toEqual(kids[0]);
  });
});
