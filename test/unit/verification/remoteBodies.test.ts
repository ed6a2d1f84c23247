import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Transform } from 'node:stream';
import { constants, createBrotliCompress, createDeflate, createGzip, gzipSync } from 'node:zlib';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProtocolError } from '../../../src/rules/errors.js';
import { verifyIdTokenHint } from '../../../src/rules/idTokenHint.js';
import { ImageError, loadImage } from '../../../src/ui/images.js';
import { readLimited } from '../../../src/verification/readLimited.js';
import { loopbackOutbound } from '../../helpers/outbound.js';

const outbound = loopbackOutbound();

/**
 * issue 31 §1, "the same rule for every other decompression of remote input": fetch decodes a gzip, br or
 * deflate Content-Encoding by itself, so a small body can stand for gigabytes. Every remote read counts the
 * bytes as it reads them, after decoding, and stops at its limit. Real HTTP servers send the bombs.
 */

const MIB = 1024 * 1024;
let server: Server;
let base: string;
const served: Record<string, { headers: Record<string, string>; body: Buffer }> = {};

/** `size` bytes of `fill`, compressed a MiB at a time (the test never holds the decoded size). */
async function bomb(compress: Transform, size: number, fill = 0): Promise<Buffer> {
  const out: Buffer[] = [];
  compress.on('data', (chunk: Buffer) => out.push(chunk));
  const done = new Promise((resolve, reject) => compress.on('end', resolve).on('error', reject));
  const mib = Buffer.alloc(MIB, fill);
  for (let written = 0; written < size; written += MIB) {
    if (!compress.write(mib)) await new Promise((resolve) => compress.once('drain', resolve));
  }
  compress.end();
  await done;
  return Buffer.concat(out);
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const answer = served[req.url!];
    if (!answer) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-length': String(answer.body.length), ...answer.headers }).end(answer.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await outbound.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('remote bodies are limited as decoded (issue 31 §1)', () => {
  it.each([
    ['gzip', () => createGzip({ level: 9 })],
    ['br', () => createBrotliCompress({ params: { [constants.BROTLI_PARAM_QUALITY]: 5 } })],
    ['deflate', () => createDeflate({ level: 9 })],
  ])(
    'readLimited refuses 256 MiB sent as a small %s body, reading little more than its limit',
    async (encoding, compressor) => {
      const body = await bomb(compressor(), 256 * MIB);
      expect(body.length).toBeLessThan(MIB);
      served[`/${encoding}`] = { headers: { 'content-encoding': encoding }, body };
      const before = process.memoryUsage().arrayBuffers;
      const response = await fetch(`${base}/${encoding}`);
      await expect(readLimited(response, MIB, () => new Error('too large'))).rejects.toThrow('too large');
      expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(48 * MIB);
    },
  );

  it("a client's jwks_uri answering a valid JWKS padded to 64 MiB under gzip cannot verify an id_token_hint; the same JWKS unpadded does", async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const jwks = Buffer.from(JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'k1' } as JWK] }));
    // JSON allows any whitespace after the value: without a limit this body parses as the JWKS
    const padding = await bomb(createGzip({ level: 9 }), 64 * MIB, 0x20);
    served['/jwks-padded'] = {
      headers: { 'content-encoding': 'gzip', 'content-type': 'application/json' },
      body: Buffer.concat([gzipSync(jwks), padding]),
    };
    served['/jwks'] = { headers: { 'content-type': 'application/json' }, body: jwks };
    const now = Math.floor(Date.now() / 1000);
    const hint = (key: CryptoKey) =>
      new SignJWT({})
        .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
        .setIssuer('rp')
        .setAudience('https://vc.example')
        .setExpirationTime(now + 60)
        .sign(key);
    const verify = async (path: string) =>
      verifyIdTokenHint(await hint(privateKey), {
        client: { clientId: 'rp', clientSecret: 'a-secret-of-the-client-0123456789', jwksUri: `${base}${path}` },
        audience: 'https://vc.example',
        clockTolerance: 30,
        maxLength: 64 * 1024,
        maxLifetime: 3600,
        outbound,
      });
    const refused = await verify('/jwks-padded').catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(ProtocolError);
    expect(refused).toMatchObject({
      error: 'invalid_request',
      message: "id_token_hint: the client's jwks_uri could not be fetched as a JWKS",
    });
    await expect(verify('/jwks')).resolves.toMatchObject({ payload: { iss: 'rp' } });
  });

  it('a logo URL answering 64 MiB under gzip is refused at start-up as larger than 256 KiB', async () => {
    served['/logo.png'] = {
      headers: { 'content-encoding': 'gzip', 'content-type': 'image/png' },
      body: await bomb(createGzip({ level: 9 }), 64 * MIB),
    };
    const refused = await loadImage(`${base}/logo.png`, process.cwd(), 'clients[0].logoUri').catch(
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(ImageError);
    expect((refused as Error).message).toBe(`clients[0].logoUri: ${base}/logo.png: larger than 256 KiB`);
  });
});
