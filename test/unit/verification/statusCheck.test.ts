import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { deflateSync, gzipSync } from 'node:zlib';
import { StatusList } from '@sd-jwt/jwt-status-list';
import { createLocalJWKSet, exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StatusChecks, StatusListInvalid, StatusListUnavailable } from '../../../src/verification/statusCheck.js';
import { loopbackOutbound } from '../../helpers/outbound.js';

/**
 * D18: the verifier's status checks (draft-ietf-oauth-status-list §8) against lists served by a real HTTP
 * server: caching by ttl and per issuer, the limits on what is fetched, and what makes a list untrustworthy.
 */
let server: Server;
let base: string;
let issuer: { privateKey: CryptoKey; keys: ReturnType<typeof createLocalJWKSet> };
const served: Record<string, { status?: number; headers?: Record<string, string>; body?: string | Buffer }> = {};
const hits: string[] = [];

async function listJwt(o: {
  sub: string;
  revoked?: number[];
  ttl?: number;
  exp?: number;
  typ?: string;
  key?: CryptoKey;
}): Promise<string> {
  const list = new StatusList(
    new Array(64).fill(0).map((_, i) => (o.revoked?.includes(i) ? 1 : 0)),
    2,
  );
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ status_list: { bits: 2, lst: list.compressStatusList() }, ...(o.ttl ? { ttl: o.ttl } : {}) })
    .setProtectedHeader({ alg: 'ES256', typ: o.typ ?? 'statuslist+jwt', kid: 'k1' })
    .setSubject(o.sub)
    .setIssuedAt(now)
    .setExpirationTime(o.exp ?? now + 3600)
    .sign(o.key ?? issuer.privateKey);
}

/** A Status List Token with the given `status_list` claim, as the issuer signs it. */
function signedList(sub: string, statusList: { bits: number; lst: string }): Promise<string> {
  return new SignJWT({ status_list: statusList, ttl: 60 })
    .setProtectedHeader({ alg: 'ES256', typ: 'statuslist+jwt', kid: 'k1' })
    .setSubject(sub)
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(issuer.privateKey);
}

beforeAll(async () => {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  issuer = {
    privateKey,
    keys: createLocalJWKSet({ keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256' } as JWK] }),
  };
  server = createServer((req: IncomingMessage, res) => {
    hits.push(req.url!);
    const answer = served[req.url!] ?? { status: 404 };
    res
      .writeHead(answer.status ?? 200, { 'content-type': 'application/statuslist+jwt', ...answer.headers })
      .end(answer.body ?? '');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
const outbound = loopbackOutbound();
afterAll(async () => {
  await outbound.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('status checks of presented credentials (D18)', () => {
  it('reads an entry, and uses a list for its ttl with one fetch, per issuer', async () => {
    served['/a'] = { body: await listJwt({ sub: `${base}/a`, revoked: [5], ttl: 60 }) };
    const checks = new StatusChecks(outbound);
    expect(await checks.status('https://issuer.example', `${base}/a`, 5, issuer.keys)).toBe(1);
    expect(await checks.status('https://issuer.example', `${base}/a`, 6, issuer.keys)).toBe(0);
    expect(hits.filter((h) => h === '/a')).toHaveLength(1);
    // after its ttl, fetched again
    expect(await checks.status('https://issuer.example', `${base}/a`, 5, issuer.keys, Date.now() + 61_000)).toBe(1);
    expect(hits.filter((h) => h === '/a')).toHaveLength(2);
    // another issuer's credential naming the same list: verified with that issuer's keys, which do not sign it
    const other = await generateKeyPair('ES256');
    const otherKeys = createLocalJWKSet({
      keys: [{ ...(await exportJWK(other.publicKey)), kid: 'k1', alg: 'ES256' } as JWK],
    });
    await expect(checks.status('https://other.example', `${base}/a`, 5, otherKeys)).rejects.toBeInstanceOf(
      StatusListInvalid,
    );
  });

  it('concurrent checks of one list share one fetch', async () => {
    served['/b'] = { body: await listJwt({ sub: `${base}/b`, ttl: 60 }) };
    const checks = new StatusChecks(outbound);
    await Promise.all(
      Array.from({ length: 10 }, (_, i) => checks.status('https://issuer.example', `${base}/b`, i, issuer.keys)),
    );
    expect(hits.filter((h) => h === '/b')).toHaveLength(1);
  });

  it('cannot have a list that is not https, too large, redirected to another host, or not there; failures are not cached', async () => {
    const checks = new StatusChecks(outbound);
    const unavailable = (uri: string) =>
      expect(checks.status('https://issuer.example', uri, 0, issuer.keys)).rejects.toBeInstanceOf(
        StatusListUnavailable,
      );
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
    const checks = new StatusChecks(outbound);
    const invalid = async (path: string, body: string, idx = 0) => {
      served[path] = { body };
      await expect(checks.status('https://issuer.example', `${base}${path}`, idx, issuer.keys)).rejects.toBeInstanceOf(
        StatusListInvalid,
      );
    };
    await invalid('/d', await listJwt({ sub: `${base}/elsewhere` }));
    await invalid('/e', await listJwt({ sub: `${base}/e`, typ: 'JWT' }));
    await invalid('/f', await listJwt({ sub: `${base}/f`, exp: Math.floor(Date.now() / 1000) - 10 }));
    await invalid('/g', await listJwt({ sub: `${base}/g` }), 10_000);
    await invalid('/h', 'not a jwt');
  });

  it('issue 31 §1: refuses a list of more entries than maxEntries as untrustworthy, and reads the next list', async () => {
    // 128 MiB of zeros: about 130 KB of lst, 1 Gi entries
    served['/bomb'] = {
      body: await signedList(`${base}/bomb`, {
        bits: 1,
        lst: deflateSync(Buffer.alloc(128 * 1024 * 1024), { level: 9 }).toString('base64url'),
      }),
    };
    const checks = new StatusChecks(outbound);
    const refused = await checks
      .status('https://issuer.example', `${base}/bomb`, 0, issuer.keys)
      .catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(StatusListInvalid);
    expect((refused as Error).message).toBe('the status list has more than 16777216 entries (statusList.maxEntries)');
    // a configured limit: 8192 entries of 2 bits are 2048 bytes
    served['/limit'] = {
      body: await signedList(`${base}/limit`, {
        bits: 2,
        lst: deflateSync(Buffer.alloc(2048, 0b01)).toString('base64url'),
      }),
    };
    served['/over'] = {
      body: await signedList(`${base}/over`, { bits: 2, lst: deflateSync(Buffer.alloc(2049)).toString('base64url') }),
    };
    const limited = new StatusChecks(outbound, 8192);
    expect(await limited.status('https://issuer.example', `${base}/limit`, 8188, issuer.keys)).toBe(1);
    expect(await limited.status('https://issuer.example', `${base}/limit`, 8189, issuer.keys)).toBe(0);
    await expect(limited.status('https://issuer.example', `${base}/over`, 0, issuer.keys)).rejects.toThrow(
      /more than 8192 entries/,
    );
    // the checks that refused the bomb go on reading lists
    await expect(checks.status('https://issuer.example', `${base}/limit`, 8188, issuer.keys)).resolves.toBe(1);
  });

  it('issue 31 §1: a gzip Content-Encoding that inflates past 1 MiB cannot be had', async () => {
    // 64 KiB on the wire, 64 MiB decoded: the size limit counts what is read, after decoding
    served['/gzip'] = {
      headers: { 'content-encoding': 'gzip' },
      body: gzipSync(Buffer.alloc(64 * 1024 * 1024, 'a'), { level: 9 }),
    };
    const checks = new StatusChecks(outbound);
    const refused = await checks
      .status('https://issuer.example', `${base}/gzip`, 0, issuer.keys)
      .catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(StatusListUnavailable);
    expect((refused as Error).message).toBe('the status list is larger than 1 MiB');
    // one that stays within the limit is read as any other
    served['/gzip-small'] = {
      headers: { 'content-encoding': 'gzip' },
      body: gzipSync(await listJwt({ sub: `${base}/gzip-small`, revoked: [7] })),
    };
    expect(await checks.status('https://issuer.example', `${base}/gzip-small`, 7, issuer.keys)).toBe(1);
  });

  it('keeps at most 64 MiB of lists (or one of the largest), the oldest leave first', async () => {
    // five lists of 16 MiB (8-bit entries at the default limit): the first leaves when the fifth comes
    const lst = deflateSync(Buffer.alloc(16 * 1024 * 1024)).toString('base64url');
    const checks = new StatusChecks(outbound);
    for (const n of [1, 2, 3, 4, 5]) {
      served[`/large${n}`] = { body: await signedList(`${base}/large${n}`, { bits: 8, lst }) };
      expect(await checks.status('https://issuer.example', `${base}/large${n}`, 0, issuer.keys)).toBe(0);
    }
    expect(await checks.status('https://issuer.example', `${base}/large5`, 1, issuer.keys)).toBe(0);
    expect(await checks.status('https://issuer.example', `${base}/large1`, 1, issuer.keys)).toBe(0);
    expect(hits.filter((h) => h === '/large5')).toHaveLength(1);
    expect(hits.filter((h) => h === '/large1')).toHaveLength(2);
  });
});
