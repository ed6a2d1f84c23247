import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StatusList } from '@sd-jwt/jwt-status-list';
import { createLocalJWKSet, exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StatusChecks, StatusListInvalid, StatusListUnavailable } from '../../../src/verification/statusCheck.js';

/**
 * D18: the verifier's status checks (draft-ietf-oauth-status-list §8) against lists served by a real HTTP
 * server: caching by ttl and per issuer, the limits on what is fetched, and what makes a list untrustworthy.
 */
let server: Server;
let base: string;
let issuer: { privateKey: CryptoKey; keys: ReturnType<typeof createLocalJWKSet> };
const served: Record<string, { status?: number; headers?: Record<string, string>; body?: string | Buffer }> = {};
const hits: string[] = [];

async function listJwt(o: { sub: string; revoked?: number[]; ttl?: number; exp?: number; typ?: string; key?: CryptoKey }): Promise<string> {
  const list = new StatusList(new Array(64).fill(0).map((_, i) => (o.revoked?.includes(i) ? 1 : 0)), 2);
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ status_list: { bits: 2, lst: list.compressStatusList() }, ...(o.ttl ? { ttl: o.ttl } : {}) })
    .setProtectedHeader({ alg: 'ES256', typ: o.typ ?? 'statuslist+jwt', kid: 'k1' })
    .setSubject(o.sub)
    .setIssuedAt(now)
    .setExpirationTime(o.exp ?? now + 3600)
    .sign(o.key ?? issuer.privateKey);
}

beforeAll(async () => {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  issuer = { privateKey, keys: createLocalJWKSet({ keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256' } as JWK] }) };
  server = createServer((req: IncomingMessage, res) => {
    hits.push(req.url!);
    const answer = served[req.url!] ?? { status: 404 };
    res.writeHead(answer.status ?? 200, { 'content-type': 'application/statuslist+jwt', ...answer.headers }).end(answer.body ?? '');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('status checks of presented credentials (D18)', () => {
  it('reads an entry, and uses a list for its ttl with one fetch, per issuer', async () => {
    served['/a'] = { body: await listJwt({ sub: `${base}/a`, revoked: [5], ttl: 60 }) };
    const checks = new StatusChecks();
    expect(await checks.status('https://issuer.example', `${base}/a`, 5, issuer.keys)).toBe(1);
    expect(await checks.status('https://issuer.example', `${base}/a`, 6, issuer.keys)).toBe(0);
    expect(hits.filter((h) => h === '/a')).toHaveLength(1);
    // after its ttl, fetched again
    expect(await checks.status('https://issuer.example', `${base}/a`, 5, issuer.keys, Date.now() + 61_000)).toBe(1);
    expect(hits.filter((h) => h === '/a')).toHaveLength(2);
    // another issuer's credential naming the same list: verified with that issuer's keys, which do not sign it
    const other = await generateKeyPair('ES256');
    const otherKeys = createLocalJWKSet({ keys: [{ ...(await exportJWK(other.publicKey)), kid: 'k1', alg: 'ES256' } as JWK] });
    await expect(checks.status('https://other.example', `${base}/a`, 5, otherKeys)).rejects.toBeInstanceOf(StatusListInvalid);
  });

  it('concurrent checks of one list share one fetch', async () => {
    served['/b'] = { body: await listJwt({ sub: `${base}/b`, ttl: 60 }) };
    const checks = new StatusChecks();
    await Promise.all(Array.from({ length: 10 }, (_, i) => checks.status('https://issuer.example', `${base}/b`, i, issuer.keys)));
    expect(hits.filter((h) => h === '/b')).toHaveLength(1);
  });

  it('cannot have a list that is not https, too large, redirected to another host, or not there; failures are not cached', async () => {
    const checks = new StatusChecks();
    const unavailable = (uri: string) => expect(checks.status('https://issuer.example', uri, 0, issuer.keys)).rejects.toBeInstanceOf(StatusListUnavailable);
    await unavailable('http://status.example/list');
    served['/big'] = { body: Buffer.alloc(1024 * 1024 + 1, 'a') };
    await unavailable(`${base}/big`);
    served['/away'] = { status: 302, headers: { location: 'http://localhost:1/list' } };
    await unavailable(`${base}/away`);
    await unavailable(`${base}/missing`);
    // a same-origin redirect is followed
    served['/moved'] = { status: 301, headers: { location: '/c' } };
    served['/c'] = { body: await listJwt({ sub: `${base}/moved`, revoked: [2] }) };
    expect(await checks.status('https://issuer.example', `${base}/moved`, 2, issuer.keys)).toBe(1);
    // not cached: once there, it is read
    served['/missing'] = { body: await listJwt({ sub: `${base}/missing` }) };
    expect(await checks.status('https://issuer.example', `${base}/missing`, 0, issuer.keys)).toBe(0);
  });

  it('does not trust a list whose sub is another URI, typ is not statuslist+jwt, that expired, or that the index is outside', async () => {
    const checks = new StatusChecks();
    const invalid = async (path: string, body: string, idx = 0) => {
      served[path] = { body };
      await expect(checks.status('https://issuer.example', `${base}${path}`, idx, issuer.keys)).rejects.toBeInstanceOf(StatusListInvalid);
    };
    await invalid('/d', await listJwt({ sub: `${base}/elsewhere` }));
    await invalid('/e', await listJwt({ sub: `${base}/e`, typ: 'JWT' }));
    await invalid('/f', await listJwt({ sub: `${base}/f`, exp: Math.floor(Date.now() / 1000) - 10 }));
    await invalid('/g', await listJwt({ sub: `${base}/g` }), 10_000);
    await invalid('/h', 'not a jwt');
  });
});
