import { createHash, createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, it, expect } from 'vitest';
import {
  CompactSign,
  exportJWK,
  exportSPKI,
  generateKeyPair,
  importJWK,
  SignJWT,
  type CryptoKey,
  type JWK,
  type JWTPayload,
} from 'jose';
import { verifyIdTokenHint, type HintClient } from '../../../src/rules/idTokenHint.js';
import { expectRejection } from './helpers.js';
import { keyPair } from '../../helpers/keys.js';
import { loopbackOutbound } from '../../helpers/outbound.js';

/** the jwks_uri server is on 127.0.0.1: allowed as for a service on a loopback base URL */
const outbound = loopbackOutbound();

const NOW = 1_700_000_000;
const AUDIENCE = 'https://vc.example.com';
const SECRET = 'correct-horse-battery-staple-0123456789';
const base: HintClient = { clientId: 'hr-portal', clientSecret: SECRET };
const opts = (
  client: HintClient = base,
  extra: Partial<{ clockTolerance: number; maxLength: number; maxLifetime: number; now: number }> = {},
) => ({
  client,
  audience: AUDIENCE,
  clockTolerance: 30,
  maxLength: 64 * 1024,
  maxLifetime: 3600,
  now: NOW,
  outbound,
  ...extra,
});

const claims = (extra: JWTPayload = {}): JWTPayload => ({
  iss: 'hr-portal',
  aud: AUDIENCE,
  iat: NOW - 10,
  exp: NOW + 300,
  FirstName: 'Alice',
  Email: 'alice@example.com',
  ...extra,
});

const hs = (payload: JWTPayload, alg = 'HS256', secret = SECRET) =>
  new SignJWT(payload).setProtectedHeader({ alg, typ: 'JWT' }).sign(new TextEncoder().encode(secret));
const signWith = (payload: JWTPayload, alg: string, key: CryptoKey, kid?: string) =>
  new SignJWT(payload).setProtectedHeader({ alg, typ: 'JWT', ...(kid ? { kid } : {}) }).sign(key);
const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');

type Pair = { publicKey: CryptoKey; privateKey: CryptoKey; jwk: JWK };
async function pair(alg: string): Promise<Pair> {
  const { publicKey, privateKey, publicJwk } = await keyPair(undefined, { alg });
  return { publicKey, privateKey, jwk: publicJwk };
}

let rsa: Pair, ec: Pair, ed: Pair, otherRsa: Pair;
/** the RSA private key of `rsa`, imported for RSA-PSS (WebCrypto keys are bound to one algorithm) */
let rsaPss: CryptoKey;
let server: Server;
let jwksUri: string;
let jwksRequests = 0;

beforeAll(async () => {
  [rsa, ec, ed, otherRsa] = await Promise.all([pair('RS256'), pair('ES256'), pair('Ed25519'), pair('RS256')]);
  rsaPss = (await importJWK(await exportJWK(rsa.privateKey), 'PS256')) as CryptoKey;
  server = createServer((req, res) => {
    if (req.url === '/broken') {
      res.writeHead(500).end('oops');
      return;
    }
    if (req.url === '/not-json') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"keys": nope');
      return;
    }
    if (req.url === '/redirect') {
      res.writeHead(302, { location: '/jwks' }).end();
      return;
    }
    jwksRequests++;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ keys: [{ ...ec.jwk, kid: 'remote-ec' }] }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  jwksUri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`;
});
afterAll(async () => {
  await outbound.close();
  await new Promise<void>((r) => server.close(() => r()));
});

describe('D7: keys per client, HS256/384/512 with the client secret', () => {
  it.each(['HS256', 'HS384', 'HS512'])(
    'accepts a hint signed %s with the client secret (D7; spec: id_token_hint sample HS256)',
    async (alg) => {
      const v = await verifyIdTokenHint(await hs(claims(), alg), opts());
      expect(v.payload.iss).toBe('hr-portal');
      expect(v.exp).toBe(NOW + 300);
    },
  );

  it('refuses a hint signed with another secret (spec: Authentication 4, "signed with the key registered")', async () => {
    await expectRejection(
      verifyIdTokenHint(await hs(claims(), 'HS256', 'another-secret-of-some-length'), opts()),
      'invalid_request',
      'id_token_hint: signature verification failed',
    );
  });

  it('refuses HS256 signed with the client RSA public key as HMAC secret (D7, algorithm confusion)', async () => {
    const pem = await exportSPKI(rsa.publicKey);
    const token = await hs(claims(), 'HS256', pem);
    const client = { ...base, jwks: { keys: [rsa.jwk as Record<string, unknown>] } };
    await expectRejection(
      verifyIdTokenHint(token, opts(client)),
      'invalid_request',
      'id_token_hint: signature verification failed',
    );
  });

  it('refuses a tampered payload (spec: Authentication 4)', async () => {
    const [h, , s] = (await hs(claims())).split('.');
    const forged = `${h}.${b64(claims({ FirstName: 'Mallory' }))}.${s}`;
    await expectRejection(
      verifyIdTokenHint(forged, opts()),
      'invalid_request',
      'id_token_hint: signature verification failed',
    );
  });
});

describe('D7: alg none and unsupported algorithms are rejected', () => {
  it.each(['none', 'None', 'NONE'])(
    'refuses alg %s crafted by hand (D7, "alg: none is always rejected")',
    async (alg) => {
      const token = `${b64({ alg, typ: 'JWT' })}.${b64(claims())}.`;
      await expectRejection(verifyIdTokenHint(token, opts()), 'invalid_request', 'id_token_hint', 'alg none');
    },
  );

  it('refuses an unsupported alg such as RS512, naming it (D7)', async () => {
    const { privateKey } = await generateKeyPair('RS512');
    const token = await signWith(claims(), 'RS512', privateKey);
    await expectRejection(
      verifyIdTokenHint(token, opts({ ...base, jwks: { keys: [rsa.jwk as Record<string, unknown>] } })),
      'invalid_request',
      'id_token_hint: alg "RS512" is not supported',
    );
  });

  it('refuses a header without alg (RFC 7515 4.1.1)', async () => {
    const token = `${b64({ typ: 'JWT' })}.${b64(claims())}.c2ln`;
    await expectRejection(verifyIdTokenHint(token, opts()), 'invalid_request', 'id_token_hint: header alg is missing');
  });
});

describe('D7: public keys (inline JWKS or jwks_uri), RS256, PS256, ES256, EdDSA', () => {
  const withJwks = (...keys: JWK[]): HintClient => ({ ...base, jwks: { keys: keys as Record<string, unknown>[] } });

  it('accepts RS256 verified with the inline JWKS (D7)', async () => {
    const v = await verifyIdTokenHint(await signWith(claims(), 'RS256', rsa.privateKey), opts(withJwks(rsa.jwk)));
    expect(v.attributes.FirstName).toBe('Alice');
  });

  it('accepts PS256 verified with an RSA key of the inline JWKS (D7)', async () => {
    await expect(
      verifyIdTokenHint(await signWith(claims(), 'PS256', rsaPss), opts(withJwks(rsa.jwk))),
    ).resolves.toBeDefined();
  });

  it('accepts ES256 verified with the inline JWKS (D7)', async () => {
    await expect(
      verifyIdTokenHint(await signWith(claims(), 'ES256', ec.privateKey), opts(withJwks(rsa.jwk, ec.jwk))),
    ).resolves.toBeDefined();
  });

  it.each(['EdDSA', 'Ed25519'])('accepts an Ed25519 key with alg %s (D7, EdDSA)', async (alg) => {
    await expect(
      verifyIdTokenHint(await signWith(claims(), alg, ed.privateKey), opts(withJwks(ed.jwk))),
    ).resolves.toBeDefined();
  });

  it('refuses RS256 signed by a key that is not registered (spec: Authentication 4)', async () => {
    const token = await signWith(claims(), 'RS256', otherRsa.privateKey);
    await expectRejection(
      verifyIdTokenHint(token, opts(withJwks(rsa.jwk))),
      'invalid_request',
      'id_token_hint: signature verification failed',
    );
  });

  it('refuses ES256 when the client registered only an RSA key: the alg must match the key type (D7)', async () => {
    const token = await signWith(claims(), 'ES256', ec.privateKey);
    await expectRejection(
      verifyIdTokenHint(token, opts(withJwks(rsa.jwk))),
      'invalid_request',
      'id_token_hint',
      'no registered key',
    );
  });

  it('refuses PS256 when the registered RSA key is pinned to alg RS256 (D7, alg must match the key)', async () => {
    const token = await signWith(claims(), 'PS256', rsaPss);
    await expectRejection(
      verifyIdTokenHint(token, opts(withJwks({ ...rsa.jwk, alg: 'RS256' }))),
      'invalid_request',
      'id_token_hint',
      'no registered key',
    );
  });

  it('refuses RS256 when the client has no public key, only a secret (D7)', async () => {
    const token = await signWith(claims(), 'RS256', rsa.privateKey);
    await expectRejection(verifyIdTokenHint(token, opts()), 'invalid_request', 'id_token_hint', 'public key');
  });

  it('accepts ES256 verified with keys fetched from jwks_uri, fetched once per URI (D7)', async () => {
    const client: HintClient = { ...base, jwksUri };
    const before = jwksRequests;
    await verifyIdTokenHint(await signWith(claims(), 'ES256', ec.privateKey, 'remote-ec'), opts(client));
    await verifyIdTokenHint(
      await signWith(claims({ jti: 'second' }), 'ES256', ec.privateKey, 'remote-ec'),
      opts(client),
    );
    expect(jwksRequests - before).toBe(1);
  });

  it('falls back to jwks_uri when the inline JWKS has no matching key (D7)', async () => {
    const client: HintClient = { ...withJwks(rsa.jwk), jwksUri };
    await expect(
      verifyIdTokenHint(await signWith(claims(), 'ES256', ec.privateKey, 'remote-ec'), opts(client)),
    ).resolves.toBeDefined();
  });

  it('refuses a token whose key is not at jwks_uri (D7)', async () => {
    const other = await pair('ES256');
    const token = await signWith(claims(), 'ES256', other.privateKey, 'remote-ec');
    await expectRejection(
      verifyIdTokenHint(token, opts({ ...base, jwksUri })),
      'invalid_request',
      'id_token_hint: signature verification failed',
    );
  });

  it('fails with invalid_request when jwks_uri cannot be reached (D7)', async () => {
    const dead = createServer();
    await new Promise<void>((r) => dead.listen(0, '127.0.0.1', r));
    const port = (dead.address() as AddressInfo).port;
    await new Promise<void>((r) => dead.close(() => r()));
    const token = await signWith(claims(), 'ES256', ec.privateKey);
    await expectRejection(
      verifyIdTokenHint(token, opts({ ...base, jwksUri: `http://127.0.0.1:${port}/jwks` })),
      'invalid_request',
      "id_token_hint: the client's jwks_uri could not be fetched",
    );
  });

  it.each([
    ['/broken', "id_token_hint: the client's jwks_uri could not be fetched"],
    ['/not-json', "id_token_hint: the client's jwks_uri could not be fetched"],
    ['/redirect', "id_token_hint: the client's jwks_uri redirects (HTTP 302)"],
  ])(
    'fails with invalid_request when jwks_uri answers %s instead of a JWKS, redirects not followed (D7)',
    async (path, description) => {
      const token = await signWith(claims(), 'ES256', ec.privateKey);
      await expectRejection(
        verifyIdTokenHint(token, opts({ ...base, jwksUri: jwksUri.replace('/jwks', path) })),
        'invalid_request',
        description,
      );
    },
  );
});

describe('spec: id_token_hint claims iss, aud, exp, nbf (D7 clock tolerance)', () => {
  it('refuses iss other than the client_id (spec: id_token_hint, iss)', async () => {
    await expectRejection(
      verifyIdTokenHint(await hs(claims({ iss: 'someone-else' })), opts()),
      'invalid_request',
      'id_token_hint: iss must equal the client_id',
    );
  });

  it('refuses a hint without iss (spec: id_token_hint, iss Required)', async () => {
    const c = claims();
    delete c.iss;
    await expectRejection(verifyIdTokenHint(await hs(c), opts()), 'invalid_request', 'id_token_hint: iss is required');
  });

  it('refuses aud other than the issuer (spec: id_token_hint, aud)', async () => {
    await expectRejection(
      verifyIdTokenHint(await hs(claims({ aud: 'https://elsewhere.example' })), opts()),
      'invalid_request',
      'id_token_hint: aud must equal the issuer',
    );
  });

  it('accepts aud as an array containing the issuer (RFC 7519 4.1.3)', async () => {
    await expect(verifyIdTokenHint(await hs(claims({ aud: ['x', AUDIENCE] })), opts())).resolves.toBeDefined();
  });

  it('refuses a hint without aud (spec: id_token_hint, aud Required)', async () => {
    const c = claims();
    delete c.aud;
    await expectRejection(verifyIdTokenHint(await hs(c), opts()), 'invalid_request', 'id_token_hint: aud is required');
  });

  it('refuses a hint without exp (spec: id_token_hint, exp Required)', async () => {
    const c = claims();
    delete c.exp;
    await expectRejection(verifyIdTokenHint(await hs(c), opts()), 'invalid_request', 'id_token_hint: exp is required');
  });

  it('refuses a non-numeric exp (RFC 7519 4.1.4)', async () => {
    await expectRejection(
      verifyIdTokenHint(await hs(claims({ exp: 'tomorrow' as unknown as number })), opts()),
      'invalid_request',
      'id_token_hint: exp has the wrong type',
    );
  });

  it.each(['nbf', 'iat'])('refuses a non-numeric %s (RFC 7519 4.1.5, 4.1.6)', async (claim) => {
    await expectRejection(
      verifyIdTokenHint(await hs(claims({ [claim]: String(NOW) })), opts()),
      'invalid_request',
      `id_token_hint: ${claim} has the wrong type`,
    );
  });

  it.each([42, null, ['hr-portal']])('refuses iss %j, which is not a string (RFC 7519 4.1.1)', async (iss) => {
    await expectRejection(
      verifyIdTokenHint(await hs(claims({ iss: iss as unknown as string })), opts()),
      'invalid_request',
      'id_token_hint: iss has the wrong type',
    );
  });

  it('refuses an aud that is not the issuer whatever its type (RFC 7519 4.1.3)', async () => {
    await expectRejection(
      verifyIdTokenHint(await hs(claims({ aud: 42 as unknown as string })), opts()),
      'invalid_request',
      'id_token_hint: aud must equal the issuer',
    );
  });

  it('refuses a hint whose exp is further ahead than hint.maxLifetime plus the tolerance (D7; hardening: records it creates live no longer)', async () => {
    await expect(verifyIdTokenHint(await hs(claims({ exp: NOW + 3600 + 30 })), opts())).resolves.toBeDefined();
    for (const exp of [NOW + 3600 + 31, NOW + 10 * 365 * 86400, 2 ** 53, 1e308]) {
      await expectRejection(
        verifyIdTokenHint(await hs(claims({ exp })), opts()),
        'invalid_request',
        'id_token_hint: exp is more than 3600 seconds ahead (hint.maxLifetime)',
      );
    }
    await expectRejection(
      verifyIdTokenHint(await hs(claims({ exp: NOW + 700 })), opts(base, { maxLifetime: 600 })),
      'invalid_request',
      'hint.maxLifetime',
    );
  });

  it('refuses an expired hint beyond the tolerance (spec: id_token_hint, exp "Must not have passed")', async () => {
    await expectRejection(
      verifyIdTokenHint(await hs(claims({ exp: NOW - 31 })), opts()),
      'invalid_request',
      'id_token_hint: exp has passed',
    );
  });

  it('accepts a hint expired within the clock tolerance (D7, tolerance 30 s)', async () => {
    await expect(verifyIdTokenHint(await hs(claims({ exp: NOW - 29 })), opts())).resolves.toBeDefined();
  });

  it('honours a configured tolerance of 0 (D7, configurable)', async () => {
    await expectRejection(
      verifyIdTokenHint(await hs(claims({ exp: NOW - 1 })), opts(base, { clockTolerance: 0 })),
      'invalid_request',
      'id_token_hint: exp',
    );
  });

  it('refuses nbf in the future beyond the tolerance (spec: id_token_hint, nbf)', async () => {
    await expectRejection(
      verifyIdTokenHint(await hs(claims({ nbf: NOW + 31 })), opts()),
      'invalid_request',
      'id_token_hint: nbf is in the future',
    );
  });

  it('accepts nbf in the future within the tolerance, and a reached nbf (D7)', async () => {
    await expect(verifyIdTokenHint(await hs(claims({ nbf: NOW + 29 })), opts())).resolves.toBeDefined();
    await expect(verifyIdTokenHint(await hs(claims({ nbf: NOW - 100 })), opts())).resolves.toBeDefined();
  });

  it('uses the real clock when now is not given (spec: id_token_hint, exp)', async () => {
    await expectRejection(
      verifyIdTokenHint(await hs(claims()), { ...opts(), now: undefined }),
      'invalid_request',
      'id_token_hint: exp has passed',
    );
  });
});

describe('spec Errors: IdTokenHint "Not a valid token hint" (form and size)', () => {
  it.each([undefined, null, '', 12])('refuses a missing or non-string hint (%j)', async (hint) => {
    await expectRejection(verifyIdTokenHint(hint, opts()), 'invalid_request', 'id_token_hint is required');
  });

  it('refuses a hint longer than maxLength before parsing it (spec: Limits)', async () => {
    const token = await hs(claims({ Blob: 'x'.repeat(2000) }));
    await expectRejection(
      verifyIdTokenHint(token, opts(base, { maxLength: 1000 })),
      'invalid_request',
      'id_token_hint: longer than 1000 characters',
    );
  });

  it.each(['abc', 'a.b', 'a.b.c.d', 'a.b.c.d.e', '.b.c', 'a b.c.d'])(
    'refuses %j as not a compact JWS (RFC 7515 7.1)',
    async (hint) => {
      await expectRejection(verifyIdTokenHint(hint, opts()), 'invalid_request', 'id_token_hint: not a compact JWS');
    },
  );

  it('refuses a header that is not JSON (RFC 7515 7.1)', async () => {
    await expectRejection(
      verifyIdTokenHint('bm90LWpzb24.e30.c2ln', opts()),
      'invalid_request',
      'id_token_hint: header',
    );
  });

  it.each(['[1,2]', 'null', '"text"', '42', '{"iss":'])(
    'refuses the payload %s, not a JSON object (RFC 7519 7.2)',
    async (payload) => {
      const token = await new CompactSign(new TextEncoder().encode(payload))
        .setProtectedHeader({ alg: 'HS256' })
        .sign(new TextEncoder().encode(SECRET));
      await expectRejection(
        verifyIdTokenHint(token, opts()),
        'invalid_request',
        'id_token_hint: payload is not a JSON object',
      );
    },
  );

  it.each([
    ['an unknown extension', { crit: ['exp'], exp: NOW }],
    ['a malformed crit', { crit: 'exp' }],
    ['an unencoded payload (RFC 7797)', { crit: ['b64'], b64: false }],
  ])('refuses a crit header with %s (RFC 7515 4.1.11)', async (_name, extra) => {
    const signingInput = `${b64({ alg: 'HS256', ...extra })}.${b64(claims())}`;
    const token = `${signingInput}.${createHmac('sha256', SECRET).update(signingInput).digest('base64url')}`;
    await expectRejection(
      verifyIdTokenHint(token, opts()),
      'invalid_request',
      'id_token_hint: crit header parameters are not supported',
    );
  });

  it('refuses a crit header on a public-key hint too (RFC 7515 4.1.11)', async () => {
    // jose refuses the extension before it looks for a key or at the signature
    const token = `${b64({ alg: 'ES256', crit: ['urn:example'], 'urn:example': 1 })}.${b64(claims())}.c2ln`;
    await expectRejection(
      verifyIdTokenHint(token, opts({ ...base, jwks: { keys: [ec.jwk as Record<string, unknown>] } })),
      'invalid_request',
      'id_token_hint: crit header parameters are not supported',
    );
  });

  it('never puts attribute values or the secret in a description (D17)', async () => {
    const e = await expectRejection(
      verifyIdTokenHint(await hs(claims({ iss: 'x', FirstName: 'SENSITIVE' })), opts()),
      'invalid_request',
      'id_token_hint',
    );
    expect(e.description).not.toContain('SENSITIVE');
    expect(e.description).not.toContain(SECRET);
  });
});

describe('D7: custom claims, PinCode and replay key', () => {
  it('returns every claim except registered JWT claims and PinCode as attributes (D7)', async () => {
    const v = await verifyIdTokenHint(
      await hs(claims({ sub: 's', jti: 'j', nbf: NOW - 5, PinCode: '1234', Photo: 'data:x' })),
      opts(),
    );
    expect(v.attributes).toEqual({ FirstName: 'Alice', Email: 'alice@example.com', Photo: 'data:x' });
    expect(v.pinCode).toBe('1234');
  });

  it('returns pinCode undefined when absent and the raw value when not a string (spec: Authentication 7)', async () => {
    expect((await verifyIdTokenHint(await hs(claims()), opts())).pinCode).toBeUndefined();
    expect((await verifyIdTokenHint(await hs(claims({ PinCode: 1234 })), opts())).pinCode).toBe(1234);
  });

  it('keeps a __proto__ claim as an own attribute without touching the prototype (D7)', async () => {
    const token = `${b64({ alg: 'HS256' })}.${Buffer.from(JSON.stringify(claims()).replace(/^\{/, '{"__proto__":{"polluted":1},')).toString('base64url')}`;
    const signed = `${token}.${createHmac('sha256', SECRET).update(token).digest('base64url')}`;
    const v = await verifyIdTokenHint(signed, opts());
    expect(Object.getPrototypeOf(v.attributes)).toBe(Object.prototype);
    expect(Object.hasOwn(v.attributes, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('uses jti:<jti> as replay key when the hint has a jti (D7, "its jti")', async () => {
    const v = await verifyIdTokenHint(await hs(claims({ jti: 'abc-123' })), opts());
    expect(v.replayKey).toBe('jti:abc-123');
  });

  it('uses the SHA-256 of the signed payload bytes as replay key without a jti (D7, "or its hash")', async () => {
    const token = await hs(claims());
    const v = await verifyIdTokenHint(token, opts());
    expect(v.replayKey).toBe(
      `sha256:${createHash('sha256')
        .update(Buffer.from(token.split('.')[1], 'base64url'))
        .digest('base64url')}`,
    );
  });

  it("gives one replay key to every spelling of one hint (spare bits of the signature's last base64url character)", async () => {
    const token = await hs(claims());
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const last = alphabet.indexOf(token.at(-1)!);
    // an HS256 signature is 32 bytes: 43 characters carry 258 bits, the last two are spare
    const respelled = `${token.slice(0, -1)}${alphabet[last ^ 1]}`;
    expect(respelled).not.toBe(token);
    const [a, b] = [await verifyIdTokenHint(token, opts()), await verifyIdTokenHint(respelled, opts())];
    expect(b.replayKey).toBe(a.replayKey);
  });
});
