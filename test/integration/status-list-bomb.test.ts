/**
 * issue 31 §1 through the whole service: a trusted issuer's Status List Token whose `lst` inflates to
 * 128 MiB (about 130 KB on the wire), or whose HTTP body is a gzip bomb (256 MiB), served by a real HTTP
 * server of the test. A presentation of a credential naming it is refused with the status error; the
 * service goes on answering /healthz while it checks and after, and goes on accepting credentials with a
 * real list.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createDeflate, createGzip } from 'node:zlib';
import { ES256, digest, generateSalt } from '@sd-jwt/crypto-nodejs';
import { StatusList } from '@sd-jwt/jwt-status-list';
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc';
import { importJWK, SignJWT, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newWallet, verifyEmployeeBadge } from '../helpers/flows.js';
import { startTestService, type TestService } from '../helpers/service.js';
import type { DevWallet } from '../../src/wallet/holder.js';
import { keyPair } from '../helpers/keys.js';

let listServer: Server;
let listBase: string;
let issuerKey: { privateJwk: JWK; publicJwk: JWK };
let t: TestService;
/** what the list server answers, by path */
const lists: Record<string, { headers?: Record<string, string>; body: string | Buffer }> = {};
/** called when the list server is asked for a path */
let onRequest: (path: string) => void = () => undefined;

/** ZLIB (or gzip) of `size` zero bytes, compressed a MiB at a time (the test never holds the inflated size). */
async function zeroBomb(size: number, gzip = false): Promise<Buffer> {
  const compress = gzip ? createGzip({ level: 9 }) : createDeflate({ level: 9 });
  const out: Buffer[] = [];
  compress.on('data', (chunk: Buffer) => out.push(chunk));
  const done = new Promise((resolve, reject) => compress.on('end', resolve).on('error', reject));
  const mib = Buffer.alloc(1024 * 1024);
  for (let written = 0; written < size; written += mib.length) {
    if (!compress.write(mib)) await new Promise((resolve) => compress.once('drain', resolve));
  }
  compress.end();
  await done;
  return Buffer.concat(out);
}

/** The issuer's Status List Token for `path` of the list server. */
async function signedList(path: string, statusList: { bits: number; lst: string }): Promise<string> {
  return new SignJWT({ status_list: statusList, ttl: 60 })
    .setProtectedHeader({ alg: 'ES256', typ: 'statuslist+jwt', kid: 'ext-1' })
    .setSubject(`${listBase}${path}`)
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(await importJWK(issuerKey.privateJwk, 'ES256'));
}

/** An EmployeeBadge of the trusted issuer naming entry `idx` of the list at `path`, in a fresh wallet. */
async function externalBadge(path: string, idx: number): Promise<DevWallet> {
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
      iss: listBase,
      vct: `${t.url}/types/EmployeeBadge`,
      iat: now,
      exp: now + 3600,
      cnf: { jwk: holder.publicJwk },
      status: { status_list: { idx, uri: `${listBase}${path}` } },
    },
    { _sd: ['FirstName', 'LastName'] } as never,
    { header: { kid: 'ext-1' } },
  );
  const wallet = await newWallet();
  await wallet.import(credential, holder.privateJwk);
  return wallet;
}

/** A relying party's verification of an EmployeeBadge, the wallet presenting: the callback and the wallet's answer. */
const verify = (wallet: DevWallet) => verifyEmployeeBadge(t.url, wallet);

/**
 * Verifies `wallet`'s badge while asking /healthz, again and again, from the moment the list server is
 * asked for `path` until the verification has ended, and once more after it.
 */
async function verifyWhileAskingHealth(
  wallet: DevWallet,
  path: string,
): Promise<{ result: Awaited<ReturnType<typeof verify>>; health: number[] }> {
  const health: number[] = [];
  let ended = false;
  let asking: Promise<void> | undefined;
  onRequest = (requested) => {
    if (requested !== path || asking) return;
    asking = (async () => {
      do health.push((await fetch(`${t.url}/healthz`)).status);
      while (!ended);
    })();
  };
  try {
    const result = await verify(wallet);
    ended = true;
    await asking;
    health.push((await fetch(`${t.url}/healthz`)).status);
    return { result, health };
  } finally {
    onRequest = () => undefined;
  }
}

beforeAll(async () => {
  issuerKey = await keyPair('ext-1');
  listServer = createServer((req, res) => {
    onRequest(req.url!);
    const list = lists[req.url!];
    if (!list) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/statuslist+jwt', ...list.headers }).end(list.body);
  });
  await new Promise<void>((resolve) => listServer.listen(0, '127.0.0.1', resolve));
  listBase = `http://127.0.0.1:${(listServer.address() as AddressInfo).port}`;
  // 128 MiB of zeros: 1 Gi entries of 1 bit, about 130 KB of lst
  lists['/lists/bomb'] = {
    body: await signedList('/lists/bomb', { bits: 1, lst: (await zeroBomb(128 * 1024 * 1024)).toString('base64url') }),
  };
  // a body of 256 MiB that travels as about 260 KB of gzip
  lists['/lists/gzip'] = { headers: { 'content-encoding': 'gzip' }, body: await zeroBomb(256 * 1024 * 1024, true) };
  // a real list: entry 3 revoked
  const real = new StatusList(
    new Array(1024).fill(0).map((_, i) => (i === 3 ? 1 : 0)),
    1,
  );
  lists['/lists/real'] = { body: await signedList('/lists/real', { bits: 1, lst: real.compressStatusList() }) };
  t = await startTestService({ trustedIssuers: [{ issuer: listBase, jwks: { keys: [issuerKey.publicJwk] } }] });
});
afterAll(async () => {
  await t?.stop();
  await new Promise<void>((resolve) => listServer?.close(() => resolve()));
});

describe('a status list bomb from a trusted issuer (issue 31 §1)', () => {
  it('a list that inflates to 128 MiB refuses the presentation with "credential status invalid", and /healthz answers throughout', async () => {
    const { result, health } = await verifyWhileAskingHealth(await externalBadge('/lists/bomb', 5), '/lists/bomb');
    expect(result.presented.status).toBe(400);
    expect(result.presented.body).toEqual({
      error: 'invalid_request',
      error_description:
        'vp_token.EmployeeBadge: credential status invalid: the status list has more than 16777216 entries (statusList.maxEntries)',
    });
    expect(result.callback.searchParams.get('error')).toBe('access_denied');
    expect(result.callback.searchParams.get('error_description')).toMatch(
      /credential status invalid: the status list has more than 16777216 entries/,
    );
    expect(result.callback.searchParams.get('code')).toBeNull();
    expect(health.length).toBeGreaterThanOrEqual(2);
    expect(health.every((status) => status === 200)).toBe(true);
  });

  it('a status list body that gzip inflates to 256 MiB refuses the presentation with "credential status unavailable", and /healthz answers throughout', async () => {
    const { result, health } = await verifyWhileAskingHealth(await externalBadge('/lists/gzip', 5), '/lists/gzip');
    expect(result.presented.status).toBe(400);
    expect(result.presented.body).toEqual({
      error: 'invalid_request',
      error_description: 'vp_token.EmployeeBadge: credential status unavailable: the status list is larger than 1 MiB',
    });
    expect(result.callback.searchParams.get('error_description')).toMatch(/credential status unavailable/);
    expect(health.every((status) => status === 200)).toBe(true);
  });

  it('after both, the service still reads a real list: a valid credential is accepted and a revoked one refused', async () => {
    const valid = await verify(await externalBadge('/lists/real', 4));
    expect(valid.callback.searchParams.get('code')).toBeTruthy();
    const revoked = await verify(await externalBadge('/lists/real', 3));
    expect(revoked.callback.searchParams.get('error_description')).toMatch(/credential revoked/);
  });
});
