import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { jwtVerify, SignJWT, type CryptoKey, type JWK } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { IssuerKeys, IssuerKeysUnavailable, jwtVcIssuerMetadataUrl } from '../../../src/verification/issuerKeys.js';
import { keyPair } from '../../helpers/keys.js';
import { loopbackOutbound } from '../../helpers/outbound.js';

interface Signer {
  privateKey: CryptoKey;
  jwk: JWK;
}

async function signer(kid?: string): Promise<Signer> {
  const { privateKey, publicJwk } = await keyPair(kid, { kidOnly: true });
  return { privateKey, jwk: publicJwk };
}

const sign = (s: Signer, kid = s.jwk.kid) =>
  new SignJWT({ iss: 'x' }).setProtectedHeader({ alg: 'ES256', ...(kid ? { kid } : {}) }).sign(s.privateKey);

/** Verifies a JWS signed by `s` with the keys IssuerKeys resolves for `issuer`. */
async function verifies(keys: IssuerKeys, issuer: string, s: Signer, kid?: string): Promise<true> {
  const resolver = keys.resolverFor(issuer);
  if (!resolver) throw new Error(`${issuer} is not trusted`);
  await jwtVerify(await sign(s, kid), resolver, { algorithms: ['ES256'] });
  return true;
}

const codeOf = async (p: Promise<unknown>) =>
  p.then(
    () => 'verified',
    (err: { code?: string; name?: string }) => err.code ?? err.name,
  );

/** A real HTTP server on 127.0.0.1; `requests` lists the paths asked for. */
interface Served {
  url: string;
  requests: string[];
  close(): Promise<void>;
}
const servers: Served[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});
/** the tests' servers are on 127.0.0.1: allowed as for a service on a loopback base URL */
const outbound = loopbackOutbound();
afterAll(() => outbound.close());

async function serve(handler: (req: IncomingMessage, res: ServerResponse, url: string) => void): Promise<Served> {
  const requests: string[] = [];
  let base = '';
  const server = createServer((req, res) => {
    requests.push(req.url ?? '');
    handler(req, res, base);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const served: Served = {
    url: base,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  servers.push(served);
  return served;
}

const json = (res: ServerResponse, body: unknown) => {
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify(body));
};

let ownKey: Signer;
let own: { issuer: string; jwks: { keys: JWK[] } };
beforeAll(async () => {
  ownKey = await signer('own-1');
  own = { issuer: 'https://vc.example.com/wallet', jwks: { keys: [ownKey.jwk] } };
});

describe('the SD-JWT VC issuer metadata location', () => {
  it.each([
    ['https://h/p', 'https://h/.well-known/jwt-vc-issuer/p'],
    ['https://h/a/b/', 'https://h/.well-known/jwt-vc-issuer/a/b'],
    ['https://h', 'https://h/.well-known/jwt-vc-issuer'],
    ['http://127.0.0.1:8080/issuer', 'http://127.0.0.1:8080/.well-known/jwt-vc-issuer/issuer'],
  ])('for %s is %s', (issuer, url) => {
    expect(jwtVcIssuerMetadataUrl(issuer)).toBe(url);
  });
});

describe('the keys of trusted issuers', () => {
  it('verifies with its own issuer and inline jwks without fetching, and trusts nobody else', async () => {
    const [i1, i2] = await Promise.all([signer('i-1'), signer('i-2')]);
    const keys = new IssuerKeys({
      outbound,
      ownIssuer: own,
      trustedIssuers: [{ issuer: 'https://inline.example', jwks: { keys: [i1.jwk, i2.jwk] } }],
    });
    expect(await verifies(keys, own.issuer, ownKey)).toBe(true);
    expect(await verifies(keys, 'https://inline.example', i2)).toBe(true);
    // RFC 7515 §4.1.4: a kid the set does not have is no key at all, even when the signature would verify
    expect(await codeOf(verifies(keys, 'https://inline.example', i1, 'nope'))).toBe('ERR_JWKS_NO_MATCHING_KEY');
    // without a kid, every key of the set that fits the alg may have signed: jose reports them all
    expect(await codeOf(verifies(keys, 'https://inline.example', i1, ''))).toBe('ERR_JWKS_MULTIPLE_MATCHING_KEYS');
    expect(keys.resolverFor('https://vc.example.com/wallet/')).toBeUndefined(); // exact identifier only
    expect(keys.resolverFor('https://evil.example')).toBeUndefined();
    expect(keys.isTrusted(own.issuer)).toBe(true);
    expect(keys.isTrusted('https://evil.example')).toBe(false);
  });

  it('keeps its own issuer keys when a trustedIssuers entry names the same issuer', async () => {
    const impostor = await signer('own-1');
    const keys = new IssuerKeys({
      outbound,
      ownIssuer: own,
      trustedIssuers: [{ issuer: own.issuer, jwks: { keys: [impostor.jwk] } }],
    });
    expect(await verifies(keys, own.issuer, ownKey)).toBe(true);
    expect(await codeOf(verifies(keys, own.issuer, impostor))).toBe('ERR_JWS_SIGNATURE_VERIFICATION_FAILED');
  });

  it('finds the keys through the issuer metadata and its jwks_uri, once, and never the encryption key', async () => {
    const key = await signer('o-1');
    const enc = await signer('o-1');
    const server = await serve((req, res, base) => {
      if (req.url === '/.well-known/jwt-vc-issuer/issuer')
        return json(res, { issuer: `${base}/issuer`, jwks_uri: `${base}/jwks` });
      if (req.url === '/jwks') return json(res, { keys: [{ ...enc.jwk, use: 'enc' }, key.jwk] });
      res.writeHead(404).end();
    });
    const issuer = `${server.url}/issuer`;
    const keys = new IssuerKeys({ outbound, ownIssuer: own, trustedIssuers: [{ issuer }] });
    expect(await verifies(keys, issuer, key)).toBe(true);
    expect(await verifies(keys, issuer, key, '')).toBe(true); // no kid: the one signing key
    await Promise.all([verifies(keys, issuer, key), verifies(keys, issuer, key)]);
    expect(server.requests).toEqual(['/.well-known/jwt-vc-issuer/issuer', '/jwks']);
  });

  it('uses the keys given inline in the issuer metadata', async () => {
    const key = await signer('m-1');
    const server = await serve((req, res, base) => json(res, { issuer: `${base}/issuer`, jwks: { keys: [key.jwk] } }));
    const keys = new IssuerKeys({ outbound, ownIssuer: own, trustedIssuers: [{ issuer: `${server.url}/issuer` }] });
    expect(await verifies(keys, `${server.url}/issuer`, key)).toBe(true);
    expect(await verifies(keys, `${server.url}/issuer`, key)).toBe(true);
    expect(server.requests).toHaveLength(1);
  });

  it('fetches a configured jwksUri directly', async () => {
    const key = await signer('k-1');
    const server = await serve((_req, res) => json(res, { keys: [key.jwk] }));
    const keys = new IssuerKeys({
      outbound,
      ownIssuer: own,
      trustedIssuers: [{ issuer: 'https://k.example', jwksUri: `${server.url}/jwks.json` }],
    });
    expect(await verifies(keys, 'https://k.example', key)).toBe(true);
    expect(server.requests).toEqual(['/jwks.json']);
  });

  it('refuses metadata that names another issuer, has both jwks and jwks_uri, or is missing', async () => {
    const key = await signer('a');
    const server = await serve((req, res, base) => {
      if (req.url === '/.well-known/jwt-vc-issuer/a')
        return json(res, { issuer: `${base}/b`, jwks: { keys: [key.jwk] } });
      if (req.url === '/.well-known/jwt-vc-issuer/both')
        return json(res, { issuer: `${base}/both`, jwks: { keys: [key.jwk] }, jwks_uri: `${base}/jwks` });
      res.writeHead(404).end();
    });
    const keys = new IssuerKeys({
      outbound,
      ownIssuer: own,
      trustedIssuers: [{ issuer: `${server.url}/a` }, { issuer: `${server.url}/both` }, { issuer: `${server.url}/c` }],
    });
    await expect(verifies(keys, `${server.url}/a`, key)).rejects.toThrow(/names another issuer/);
    await expect(verifies(keys, `${server.url}/both`, key)).rejects.toThrow(/both jwks and jwks_uri/);
    await expect(verifies(keys, `${server.url}/c`, key)).rejects.toThrow(IssuerKeysUnavailable);
    await expect(verifies(keys, `${server.url}/c`, key)).rejects.toThrow(/HTTP 404/);
  });

  it.each([
    ['an HTTP error', (res: ServerResponse) => res.writeHead(503).end(), /HTTP 503/],
    ['a body that is not JSON', (res: ServerResponse) => res.end('{"keys": nope'), /not JSON/],
    ['JSON that is not a key set', (res: ServerResponse) => json(res, { keys: 'none' }), /not a JWK set/],
  ])('refuses a jwksUri answering %s as unavailable keys', async (_name, answer, message) => {
    const key = await signer('k');
    const server = await serve((_req, res) => answer(res));
    const keys = new IssuerKeys({
      outbound,
      ownIssuer: own,
      trustedIssuers: [{ issuer: 'https://k.example', jwksUri: `${server.url}/jwks` }],
    });
    const failed = verifies(keys, 'https://k.example', key);
    await expect(failed).rejects.toThrow(IssuerKeysUnavailable);
    await expect(verifies(keys, 'https://k.example', key)).rejects.toThrow(message);
  });

  it('does not cache failures', async () => {
    const key = await signer('k');
    let up = false;
    const server = await serve((_req, res) => (up ? json(res, { keys: [key.jwk] }) : res.writeHead(503).end()));
    const keys = new IssuerKeys({
      outbound,
      ownIssuer: own,
      trustedIssuers: [{ issuer: 'https://k.example', jwksUri: `${server.url}/jwks` }, { issuer: `${server.url}/m` }],
    });
    await expect(verifies(keys, 'https://k.example', key)).rejects.toThrow(IssuerKeysUnavailable);
    await expect(verifies(keys, `${server.url}/m`, key)).rejects.toThrow(IssuerKeysUnavailable);
    up = true;
    expect(await verifies(keys, 'https://k.example', key)).toBe(true);
  });
});

describe('fetching key sets safely', () => {
  it('does not follow a redirect from a jwks_uri or a metadata location', async () => {
    const key = await signer('k');
    const server = await serve((req, res, base) => {
      if (req.url === '/jwks' || req.url === '/.well-known/jwt-vc-issuer/m')
        return res.writeHead(302, { location: `${base}/elsewhere` }).end();
      json(res, { keys: [key.jwk] });
    });
    const keys = new IssuerKeys({
      outbound,
      ownIssuer: own,
      trustedIssuers: [{ issuer: 'https://k.example', jwksUri: `${server.url}/jwks` }, { issuer: `${server.url}/m` }],
    });
    await expect(verifies(keys, 'https://k.example', key)).rejects.toThrow(/HTTP 302/);
    await expect(verifies(keys, `${server.url}/m`, key)).rejects.toThrow(/HTTP 302/);
    expect(server.requests).not.toContain('/elsewhere');
  });

  it.each([
    ['declared in content-length', false],
    ['streamed without a length', true],
  ])('refuses a key set larger than 256 KiB (%s)', async (_name, chunked) => {
    const key = await signer('k');
    const body = JSON.stringify({ keys: [key.jwk, { kty: 'oct', k: 'a'.repeat(300 * 1024) }] });
    const server = await serve((_req, res) => {
      if (chunked) {
        res.writeHead(200, { 'content-type': 'application/json' });
        for (let i = 0; i < body.length; i += 16 * 1024) res.write(body.slice(i, i + 16 * 1024));
        res.end();
      } else {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
      }
    });
    const keys = new IssuerKeys({
      outbound,
      ownIssuer: own,
      trustedIssuers: [{ issuer: 'https://k.example', jwksUri: `${server.url}/jwks` }],
    });
    await expect(verifies(keys, 'https://k.example', key)).rejects.toThrow(/is larger than 256 KiB/);
  });

  it('gives up on a jwks_uri or a metadata location that never answers', async () => {
    const key = await signer('k');
    const server = await serve(() => undefined); // accepts, never answers
    const keys = new IssuerKeys({
      outbound,
      ownIssuer: own,
      trustedIssuers: [{ issuer: 'https://k.example', jwksUri: `${server.url}/jwks` }, { issuer: `${server.url}/m` }],
      timeoutMs: 200,
    });
    const started = Date.now();
    await expect(verifies(keys, 'https://k.example', key)).rejects.toThrow(/timed out/);
    await expect(verifies(keys, `${server.url}/m`, key)).rejects.toThrow(IssuerKeysUnavailable);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('refuses an unreachable jwks_uri as unavailable keys', async () => {
    const key = await signer('k');
    const server = await serve(() => undefined);
    await server.close();
    const keys = new IssuerKeys({
      outbound,
      ownIssuer: own,
      trustedIssuers: [{ issuer: 'https://k.example', jwksUri: `${server.url}/jwks` }],
    });
    await expect(verifies(keys, 'https://k.example', key)).rejects.toThrow(/the issuer JWKS cannot be fetched/);
  });
});

describe('key rotation', () => {
  const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it.each([
    [
      'at a jwks_uri',
      (base: string, keys: JWK[]) => ({
        issuer: 'https://k.example',
        served: { keys } as unknown,
        jwksUri: `${base}/jwks`,
      }),
    ],
    [
      'inline in the issuer metadata',
      (base: string, keys: JWK[]) => ({
        issuer: `${base}/m`,
        served: { issuer: `${base}/m`, jwks: { keys } } as unknown,
        jwksUri: undefined,
      }),
    ],
  ])('finds a rotated key %s after the cooldown, not before', async (_name, setup) => {
    const [oldKey, newKey] = await Promise.all([signer('2024'), signer('2025')]);
    let published = [oldKey.jwk];
    const server = await serve((_req, res, base) => json(res, setup(base, published).served));
    const { issuer, jwksUri } = setup(server.url, published);
    const keys = new IssuerKeys({
      outbound,
      ownIssuer: own,
      trustedIssuers: [{ issuer, ...(jwksUri ? { jwksUri } : {}) }],
      cooldownSeconds: 0.3,
    });
    expect(await verifies(keys, issuer, oldKey)).toBe(true);
    published = [oldKey.jwk, newKey.jwk];
    // within the cooldown an unknown kid does not cause a fetch
    expect(await codeOf(verifies(keys, issuer, newKey))).toBe('ERR_JWKS_NO_MATCHING_KEY');
    expect(server.requests).toHaveLength(1);
    await wait(400);
    expect(await verifies(keys, issuer, newKey)).toBe(true);
    expect(await verifies(keys, issuer, oldKey)).toBe(true);
    expect(server.requests).toHaveLength(2);
  });
});
