/**
 * Fetches we did not choose (docs/decisions.md "Outbound fetches"), through the whole service: a trusted
 * issuer's SD-JWT VC issuer metadata (draft-ietf-oauth-sd-jwt-vc §5) names a jwks_uri that points at a
 * data: URL, a cloud metadata address, the unspecified address, a private network, a loopback address
 * the operator did not allow, a name that resolves to loopback, a redirect to another origin, an
 * oversized or a silent answer. Every presentation naming such an issuer is refused with
 * issuer_keys_unavailable (and the relying party gets access_denied), never a 500 or a hang; no request
 * reaches a refused target. The operator's `outboundFetch.allowedPrivateTargets` lists the name
 * `localhost`: the legitimate test issuer, on this machine, passes through it.
 */
import { lookup as dnsLookup } from 'node:dns';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, LookupFunction } from 'node:net';
import { ES256, digest, generateSalt } from '@sd-jwt/crypto-nodejs';
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc';
import { SignJWT, importJWK, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newWallet, verifyEmployeeBadge } from '../helpers/flows.js';
import { keyPair } from '../helpers/keys.js';
import { pkcePair, postForm } from '../helpers/rp.js';
import { REDIRECT, startTestService, testConfig, type TestService } from '../helpers/service.js';

let server: Server;
/** the legitimate issuer's server, by the name the operator allowed */
let base: string;
/** the same server by its loopback address, which the operator did not allow */
let loopback: string;
let other: Server;
let otherBase: string;
let issuerKey: { privateJwk: JWK; publicJwk: JWK };
let t: TestService;
/** every path the issuer's server and the other server were asked for */
const asked: string[] = [];
/** every name the service's DNS was asked for */
const resolved: string[] = [];

/** The DNS of the service: names under rebind.test resolve to 127.0.0.1, everything else as usual. */
const lookup: LookupFunction = (hostname, options, callback) => {
  resolved.push(hostname);
  if (hostname.endsWith('.rebind.test'))
    return options.all
      ? (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [
          { address: '127.0.0.1', family: 4 },
        ])
      : callback(null, '127.0.0.1', 4);
  dnsLookup(hostname, options, callback);
};

/** the jwks_uri each case's issuer metadata names (after base, loopback and port are known) */
const JWKS_URIS: Record<string, () => string> = {
  allowed: () => `${base}/jwks`,
  data: () => `data:application/json,${encodeURIComponent(JSON.stringify({ keys: [issuerKey.publicJwk] }))}`,
  'link-local': () => `https://169.254.169.254/latest/meta-data/jwks`,
  unspecified: () => `https://0.0.0.0:${new URL(base).port}/jwks-unspecified`,
  private: () => 'https://10.0.0.1/jwks',
  'unique-local': () => 'https://[fd00::1]/jwks',
  cgnat: () => 'https://100.64.0.1/jwks',
  'loopback-address': () => `${loopback}/jwks-loopback`,
  'resolves-to-loopback': () => `https://keys.rebind.test:${new URL(base).port}/jwks-rebind`,
  redirect: () => `${base}/jwks-redirect`,
  oversized: () => `${base}/jwks-big`,
  silent: () => `${base}/jwks-silent`,
};
const issuerOf = (name: string) => `${base}/${name}`;

beforeAll(async () => {
  issuerKey = await keyPair('ext-1');
  other = createServer((req, res) => {
    asked.push(`other ${req.url}`);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [issuerKey.publicJwk] }));
  });
  await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
  otherBase = `http://localhost:${(other.address() as AddressInfo).port}`;
  server = createServer((req, res) => {
    const path = req.url ?? '';
    asked.push(path);
    const json = (body: unknown) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    const metadata = /^\/\.well-known\/jwt-vc-issuer\/([a-z-]+)$/.exec(path);
    if (metadata && JWKS_URIS[metadata[1]])
      return json({ issuer: issuerOf(metadata[1]), jwks_uri: JWKS_URIS[metadata[1]]() });
    if (path === '/jwks') return json({ keys: [issuerKey.publicJwk] });
    if (path === '/jwks-redirect') return res.writeHead(302, { location: `${otherBase}/jwks` }).end();
    if (path === '/jwks-big') return json({ keys: [issuerKey.publicJwk, { kty: 'oct', k: 'a'.repeat(300 * 1024) }] });
    if (path === '/jwks-silent') return; // accepts, never answers
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  base = `http://localhost:${port}`;
  loopback = `http://127.0.0.1:${port}`;
  t = await startTestService(
    {
      outboundFetch: { allowedPrivateTargets: ['localhost'] },
      trustedIssuers: [...Object.keys(JWKS_URIS).map((name) => ({ issuer: issuerOf(name) }))],
      clients: [
        ...(testConfig(0).clients as unknown[]),
        {
          clientId: 'hint-keys-private',
          clientSecret: 'hint-keys-secret-0123456789abcdef',
          redirectUris: [REDIRECT],
          scopes: ['issue.EmployeeBadge'],
          hintKeys: { jwksUri: 'https://10.1.2.3/jwks' },
        },
      ],
    },
    { lookup },
  );
});
afterAll(async () => {
  await t?.stop();
  server?.closeAllConnections();
  await new Promise<void>((resolve) => server?.close(() => resolve()));
  await new Promise<void>((resolve) => other?.close(() => resolve()));
});

/** An EmployeeBadge signed by the test issuer's key as `iss`, in a fresh wallet. */
async function badgeOf(iss: string, claims: Record<string, unknown> = {}) {
  const holder = await keyPair();
  const sdJwt = new SDJwtVcInstance({
    signer: await ES256.getSigner(issuerKey.privateJwk),
    signAlg: 'ES256',
    hasher: digest,
    hashAlg: 'sha-256',
    saltGenerator: generateSalt,
  });
  const now = Math.floor(Date.now() / 1000);
  const credential = await sdJwt.issue(
    {
      FirstName: 'Ext',
      LastName: 'Ernal',
      iss,
      vct: `${t.url}/types/EmployeeBadge`,
      iat: now,
      exp: now + 3600,
      cnf: { jwk: holder.publicJwk },
      ...claims,
    },
    { _sd: ['FirstName', 'LastName'] } as never,
    { header: { kid: 'ext-1' } },
  );
  const wallet = await newWallet();
  await wallet.import(credential, holder.privateJwk);
  return wallet;
}

/** The presentation of a badge of issuer `name`: the wallet's answer and the relying party's callback. */
const present = async (iss: string, claims?: Record<string, unknown>) =>
  verifyEmployeeBadge(t.url, await badgeOf(iss, claims));

function expectRefused(result: Awaited<ReturnType<typeof present>>, description: RegExp | string) {
  expect(result.presented.status).toBe(400);
  const body = result.presented.body as { error: string; error_description: string };
  expect(body.error).toBe('invalid_request');
  if (typeof description === 'string') expect(body.error_description).toBe(description);
  else expect(body.error_description).toMatch(description);
  expect(result.callback.searchParams.get('error')).toBe('access_denied');
  expect(result.callback.searchParams.get('code')).toBeNull();
}

const unavailable = (name: string, why: string) =>
  `vp_token.EmployeeBadge: the keys of issuer ${issuerOf(name)} are unavailable: ${why}`;

describe('a trusted issuer whose metadata names a jwks_uri we do not fetch (outboundFetch)', () => {
  it('the legitimate issuer on this machine, allowed by name, is fetched and its credential accepted', async () => {
    const result = await present(issuerOf('allowed'));
    expect(result.presented.status).toBe(200);
    expect(result.callback.searchParams.get('code')).toBeTruthy();
    expect(asked).toContain('/jwks');
  });

  it.each([
    ['data', 'the issuer jwks_uri is not https (http only on a loopback host)'],
    [
      'link-local',
      'the issuer jwks_uri is at a link-local address, which outboundFetch.allowedPrivateTargets does not allow',
    ],
    [
      'unspecified',
      'the issuer jwks_uri is at an unspecified address, which outboundFetch.allowedPrivateTargets does not allow',
    ],
    [
      'private',
      'the issuer jwks_uri is at a private address, which outboundFetch.allowedPrivateTargets does not allow',
    ],
    [
      'unique-local',
      'the issuer jwks_uri is at a unique local (private) address, which outboundFetch.allowedPrivateTargets does not allow',
    ],
    [
      'cgnat',
      'the issuer jwks_uri is at a shared (CGNAT) address, which outboundFetch.allowedPrivateTargets does not allow',
    ],
    [
      'loopback-address',
      'the issuer jwks_uri is at a loopback address, which outboundFetch.allowedPrivateTargets does not allow',
    ],
    [
      'resolves-to-loopback',
      'the issuer jwks_uri is at a loopback address, which outboundFetch.allowedPrivateTargets does not allow',
    ],
    ['redirect', 'the issuer jwks_uri redirects (HTTP 302)'],
    ['oversized', 'the issuer jwks_uri is larger than 256 KiB'],
  ])('%s: refused with issuer_keys_unavailable, and nothing reaches the target', async (name, why) => {
    const result = await present(issuerOf(name));
    expectRefused(result, unavailable(name, why));
  });

  it('the refused targets were never asked: the loopback address, the name resolving to loopback, the redirect target', () => {
    expect(asked).not.toContain('/jwks-loopback');
    expect(asked).not.toContain('/jwks-rebind');
    expect(asked).not.toContain('/jwks-unspecified');
    expect(asked.filter((p) => p.startsWith('other '))).toEqual([]);
    // the name was resolved (by the connection's own lookup), and refused by the address it resolved to
    expect(resolved).toContain('keys.rebind.test');
  });

  it('silent: a jwks_uri that never answers is refused as timed out, not a hang', async () => {
    const result = await present(issuerOf('silent'));
    expectRefused(result, unavailable('silent', 'fetching the issuer jwks_uri timed out'));
  }, 30_000);
});

describe('what else a presentation or a request can make us fetch', () => {
  it('an issuer nobody configured is refused before anything is fetched (its metadata is never asked for)', async () => {
    const before = asked.length;
    const result = await present(`${base}/stranger`);
    expectRefused(result, "vp_token.EmployeeBadge: the credential's issuer (iss) is not trusted");
    expect(asked.slice(before)).toEqual([]);
  });

  it("a trusted issuer's credential whose status list is at a link-local address is refused (status unavailable)", async () => {
    const result = await present(issuerOf('allowed'), {
      status: { status_list: { idx: 0, uri: 'https://169.254.169.254/lists/1' } },
    });
    expectRefused(
      result,
      'vp_token.EmployeeBadge: credential status unavailable: the status list is at a link-local address, which outboundFetch.allowedPrivateTargets does not allow',
    );
  });

  it("a client's hint jwks_uri at a private address refuses the PAR request with invalid_request naming it (D7)", async () => {
    const { privateJwk } = await keyPair('hint-1');
    const now = Math.floor(Date.now() / 1000);
    const hint = await new SignJWT({ FirstName: 'Ada', LastName: 'Lovelace' })
      .setProtectedHeader({ alg: 'ES256', kid: 'hint-1' })
      .setIssuer('hint-keys-private')
      .setAudience(t.url)
      .setIssuedAt(now)
      .setExpirationTime(now + 120)
      .sign(await importJWK(privateJwk, 'ES256'));
    const par = await postForm(`${t.url}/v2.0/oidc/par`, {
      client_id: 'hint-keys-private',
      client_secret: 'hint-keys-secret-0123456789abcdef',
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'openid issue.EmployeeBadge',
      code_challenge: pkcePair().challenge,
      code_challenge_method: 'S256',
      id_token_hint: hint,
    });
    expect(par.status).toBe(400);
    expect(par.body).toEqual({
      error: 'invalid_request',
      error_description:
        "id_token_hint: the client's jwks_uri is at a private address, which outboundFetch.allowedPrivateTargets does not allow",
    });
  });
});
