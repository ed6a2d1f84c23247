import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  base64url,
  compactDecrypt,
  decodeJwt,
  decodeProtectedHeader,
  exportJWK,
  generateKeyPair,
  importPKCS8,
  SignJWT,
  type JWK,
} from 'jose';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { generateVerifierCertificates, readPemCertificates, x509Hash } from '../../../src/keys/x509.js';
import { parseArgs, run } from '../../../src/wallet/cli.js';
import { DevWallet, WalletError } from '../../../src/wallet/holder.js';
import { resolveRequest, WALLET_METADATA } from '../../../src/wallet/presentation.js';
import { writeWalletFile, type StoredSdJwt } from '../../../src/wallet/walletFile.js';

/**
 * The dev wallet against a verifier as OpenID4VC HAIP 1.0 wants it: request objects signed under an X.509
 * chain (OpenID4VP 1.0 §5.9.3), fetched by POST with a wallet_nonce (§5.10), answered encrypted
 * (direct_post.jwt, §8.3). Real crypto, real HTTP: a node:http verifier on 127.0.0.1 serves what the test
 * signs and records what the wallet sends.
 */

const VCT = 'https://vc.example.com/types/EmployeeBadge';
const sha256 = (s: string) => createHash('sha256').update(s).digest('base64url');
const disclosureFor = (name: string, value: unknown) => base64url.encode(JSON.stringify([`salt-${name}`, name, value]));
const b64 = (der: Uint8Array) => Buffer.from(der).toString('base64');

interface Recorded {
  method: string;
  headers: IncomingMessage['headers'];
  form: URLSearchParams;
}

/** What the verifier does, per test: the request object for a fetch (given the POSTed form), the answer to a response. */
let serveRequest: (
  form: URLSearchParams,
) => Promise<{ status?: number; body: string; headers?: Record<string, string> }>;
let answerResponse: () => { status: number; body: unknown };
let requests: Recorded[];
let responses: Recorded[];

let server: Server;
let base: string; // http://127.0.0.1:port
let local: string; // http://localhost:port, the host the verifier certificate names

let leafDer: Uint8Array;
let chain: Uint8Array[];
let trust: Uint8Array[];
let caPem: string;
let otherCa: Uint8Array[];
let signingKey: CryptoKey;
let encPrivate: CryptoKey;
let encPublic: JWK;
let holderPrivate: JWK;
let credential: string;

beforeAll(async () => {
  const certs = await generateVerifierCertificates('localhost');
  caPem = certs.caCertificate;
  trust = readPemCertificates(certs.caCertificate, 'ca');
  chain = readPemCertificates(certs.chain, 'chain');
  leafDer = chain[0];
  signingKey = await importPKCS8(certs.key, 'ES256');
  otherCa = readPemCertificates((await generateVerifierCertificates('localhost')).caCertificate, 'other ca');

  const enc = await generateKeyPair('ECDH-ES', { crv: 'P-256', extractable: true });
  encPrivate = enc.privateKey;
  encPublic = { ...(await exportJWK(enc.publicKey)), use: 'enc', alg: 'ECDH-ES', kid: 'enc-1' };

  const issuer = await generateKeyPair('ES256');
  const holder = await generateKeyPair('ES256', { extractable: true });
  holderPrivate = await exportJWK(holder.privateKey);
  const disclosures = [disclosureFor('FirstName', 'Ada'), disclosureFor('LastName', 'Lovelace')];
  const jwt = await new SignJWT({
    iss: 'https://vc.example.com/wallet',
    vct: VCT,
    cnf: { jwk: await exportJWK(holder.publicKey) },
    _sd: disclosures.map(sha256),
    _sd_alg: 'sha-256',
  })
    .setProtectedHeader({ alg: 'ES256', typ: 'dc+sd-jwt' })
    .sign(issuer.privateKey);
  credential = `${jwt}~${disclosures.join('~')}~`;

  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      const record = { method: req.method!, headers: req.headers, form };
      if (req.url === '/request') {
        requests.push(record);
        const { status = 200, body, headers = {} } = await serveRequest(form);
        res.writeHead(status, { 'content-type': 'application/oauth-authz-req+jwt', ...headers }).end(body);
      } else if (req.url === '/response' && req.method === 'POST') {
        responses.push(record);
        const { status, body } = answerResponse();
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      } else {
        res.writeHead(404).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  base = `http://127.0.0.1:${port}`;
  local = `http://localhost:${port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

let dir: string;
let walletFile: string;
beforeEach(async () => {
  requests = [];
  responses = [];
  answerResponse = () => ({ status: 200, body: {} });
  dir = await mkdtemp(join(tmpdir(), 'wallet-haip-'));
  walletFile = join(dir, 'wallet.json');
  const held: StoredSdJwt = {
    id: 'c1',
    format: 'dc+sd-jwt',
    credential,
    issuer: 'https://vc.example.com/wallet',
    vct: VCT,
    receivedAt: '2026-01-01T00:00:00.000Z',
    holderKey: holderPrivate,
    claims: { FirstName: 'Ada', LastName: 'Lovelace' },
  };
  await writeWalletFile(walletFile, { version: 1, credentials: [held] });
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const hashClientId = () => `x509_hash:${x509Hash(leafDer)}`;

const badgeQuery = {
  id: 'EmployeeBadge',
  format: 'dc+sd-jwt',
  meta: { vct_values: [VCT] },
  claims: [{ id: 'FirstName', path: ['FirstName'] }],
};

/** The request object payload the server sends (see the brief of the HAIP verifier). */
function payload(clientId: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const now = Math.floor(Date.now() / 1000);
  return {
    aud: 'https://self-issued.me/v2',
    response_type: 'vp_token',
    response_mode: 'direct_post.jwt',
    client_id: clientId,
    response_uri: `${local}/response`,
    nonce: 'nonce-1',
    state: 'state-1',
    dcql_query: { credentials: [badgeQuery] },
    client_metadata: {
      vp_formats_supported: {
        'dc+sd-jwt': { 'sd-jwt_alg_values': ['ES256'], 'kb-jwt_alg_values': ['ES256'] },
        mso_mdoc: { issuerauth_alg_values: [-7], deviceauth_alg_values: [-7] },
      },
      jwks: { keys: [encPublic] },
      encrypted_response_enc_values_supported: ['A128GCM', 'A256GCM'],
    },
    iat: now,
    exp: now + 300,
    ...overrides,
  };
}

async function sign(
  body: Record<string, unknown>,
  opts: { key?: CryptoKey; x5c?: Uint8Array[] | null; alg?: string } = {},
): Promise<string> {
  const header: Record<string, unknown> = { alg: opts.alg ?? 'ES256', typ: 'oauth-authz-req+jwt' };
  if (opts.x5c !== null) header.x5c = (opts.x5c ?? chain).map(b64);
  return new SignJWT(body).setProtectedHeader(header as { alg: string }).sign(opts.key ?? signingKey);
}

const unsignedJwt = (body: Record<string, unknown>, header: Record<string, unknown>) =>
  `${base64url.encode(JSON.stringify(header))}.${base64url.encode(JSON.stringify(body))}.`;

/** Serves the request object `make` returns, given the wallet_nonce the wallet POSTed (null for GET). */
function serving(make: (walletNonce: string | null) => Promise<string> | string): void {
  serveRequest = async (form) => ({ body: await make(form.get('wallet_nonce')) });
}

const link = (clientId: string, method?: 'get' | 'post') =>
  `openid4vp://?client_id=${encodeURIComponent(clientId)}&request_uri=${encodeURIComponent(`${base}/request`)}${method ? `&request_uri_method=${method}` : ''}`;

const open = () => DevWallet.open(walletFile);

async function decrypt(jwe: string): Promise<{ header: Record<string, unknown>; body: Record<string, unknown> }> {
  const { plaintext, protectedHeader } = await compactDecrypt(jwe, encPrivate);
  return {
    header: protectedHeader as Record<string, unknown>,
    body: JSON.parse(new TextDecoder().decode(plaintext)) as Record<string, unknown>,
  };
}

describe('a request signed under a verifier certificate (x509_hash, x509_san_dns)', () => {
  it('x509_hash: checks the chain and the hash, fetches by POST with a wallet_nonce, answers encrypted', async () => {
    serving((nonce) => sign(payload(hashClientId(), { wallet_nonce: nonce })));
    const answer = await (await open()).present(link(hashClientId(), 'post'), { trust });
    expect(answer).toEqual({ status: 200, body: {}, verifier: 'CN=localhost' });

    // §5.10: POST, form encoded, asking for a request object, with the wallet's metadata and a fresh nonce
    expect(requests).toHaveLength(1);
    const [fetched] = requests;
    expect(fetched.method).toBe('POST');
    expect(fetched.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(fetched.headers.accept).toBe('application/oauth-authz-req+jwt');
    expect(JSON.parse(fetched.form.get('wallet_metadata')!)).toEqual(WALLET_METADATA);
    expect(WALLET_METADATA).toMatchObject({
      vp_formats_supported: {
        'dc+sd-jwt': { 'sd-jwt_alg_values': ['ES256', 'EdDSA'] },
        mso_mdoc: { issuerauth_alg_values: [-7], deviceauth_alg_values: [-7] },
      },
      client_id_prefixes_supported: ['x509_hash', 'x509_san_dns', 'redirect_uri'],
      request_object_signing_alg_values_supported: ['ES256'],
      authorization_encryption_alg_values_supported: ['ECDH-ES'],
      authorization_encryption_enc_values_supported: ['A128GCM', 'A256GCM'],
    });
    expect(fetched.form.get('wallet_nonce')).toMatch(/^[\w-]{22,}$/);

    // §8.3: only `response`, a JWE to the verifier's key (its kid), the first enc both support
    expect(responses).toHaveLength(1);
    expect([...responses[0].form.keys()]).toEqual(['response']);
    const { header, body } = await decrypt(responses[0].form.get('response')!);
    expect(header).toMatchObject({ alg: 'ECDH-ES', enc: 'A128GCM', kid: 'enc-1' });
    expect(body).toEqual({ vp_token: { EmployeeBadge: [expect.any(String)] }, state: 'state-1' });
    const presentation = (body.vp_token as Record<string, string[]>).EmployeeBadge[0];
    const parts = presentation.split('~');
    expect(parts).toHaveLength(3); // issuer JWT, FirstName, KB-JWT: LastName withheld
    expect(decodeJwt(parts[2])).toMatchObject({ aud: hashClientId(), nonce: 'nonce-1' });
  });

  it('x509_san_dns: the leaf names the host, which is the response_uri host; fetched by GET', async () => {
    serving(() => sign(payload('x509_san_dns:localhost', { response_mode: 'direct_post' })));
    answerResponse = () => ({ status: 200, body: { redirect_uri: `${local}/cb#response_code=abc` } });
    const answer = await (await open()).present(link('x509_san_dns:localhost'), { trust });
    expect(answer).toMatchObject({ status: 200, redirectUri: `${local}/cb#response_code=abc` });
    expect(requests[0].method).toBe('GET');
    // direct_post: vp_token as a JSON string beside state (§8.2)
    expect(JSON.parse(responses[0].form.get('vp_token')!)).toEqual({ EmployeeBadge: [expect.any(String)] });
    expect(responses[0].form.get('state')).toBe('state-1');
  });

  it('uses the trust anchors given when the wallet was opened', async () => {
    serving(() => sign(payload(hashClientId())));
    const wallet = await DevWallet.open(walletFile, { trust });
    expect((await wallet.present(link(hashClientId()))).status).toBe(200);
  });

  it.each<
    [
      string,
      () => {
        clientId: string;
        method?: 'post';
        make: (nonce: string | null) => Promise<string> | string;
        trust?: Uint8Array[] | null;
      },
      RegExp,
    ]
  >([
    [
      'a POSTed request that does not echo the wallet_nonce',
      () => ({ clientId: hashClientId(), method: 'post', make: () => sign(payload(hashClientId())) }),
      /wallet_nonce/,
    ],
    [
      'a POSTed request that echoes another wallet_nonce',
      () => ({
        clientId: hashClientId(),
        method: 'post',
        make: () => sign(payload(hashClientId(), { wallet_nonce: 'not-mine' })),
      }),
      /wallet_nonce/,
    ],
    [
      'an x509_hash that is not the hash of the leaf',
      () => ({
        clientId: `x509_hash:${x509Hash(trust[0])}`,
        make: () => sign(payload(`x509_hash:${x509Hash(trust[0])}`)),
      }),
      /not the hash/,
    ],
    [
      'an x509_san_dns name the leaf does not carry',
      () => ({
        clientId: 'x509_san_dns:verifier.example',
        make: () =>
          sign(payload('x509_san_dns:verifier.example', { response_uri: 'https://verifier.example/response' })),
      }),
      /does not name verifier\.example/,
    ],
    [
      'a response_uri on another host than the x509_san_dns name',
      () => ({
        clientId: 'x509_san_dns:localhost',
        make: () => sign(payload('x509_san_dns:localhost', { response_uri: `${base}/response` })),
      }),
      /response_uri host is not localhost/,
    ],
    [
      'an unsigned request (alg none) under an x509 prefix',
      () => ({
        clientId: hashClientId(),
        make: () =>
          unsignedJwt(payload(hashClientId()), { alg: 'none', typ: 'oauth-authz-req+jwt', x5c: chain.map(b64) }),
      }),
      /must be signed with ES256, not none/,
    ],
    [
      'another signature algorithm',
      () => ({
        clientId: hashClientId(),
        make: () =>
          unsignedJwt(payload(hashClientId()), { alg: 'HS256', typ: 'oauth-authz-req+jwt', x5c: chain.map(b64) }) +
          'c2ln',
      }),
      /ES256/,
    ],
    ['no x5c', () => ({ clientId: hashClientId(), make: () => sign(payload(hashClientId()), { x5c: null }) }), /x5c/],
    [
      'a signature by another key than the leaf',
      () => ({
        clientId: hashClientId(),
        make: async () => sign(payload(hashClientId()), { key: (await generateKeyPair('ES256')).privateKey }),
      }),
      /signature does not verify/,
    ],
    [
      'a chain to a CA the wallet does not trust',
      () => ({ clientId: hashClientId(), make: () => sign(payload(hashClientId())), trust: otherCa }),
      /not trusted: the chain does not end at a trusted root/,
    ],
    [
      'an x509 request when no --trust was given',
      () => ({ clientId: hashClientId(), make: () => sign(payload(hashClientId())), trust: null }),
      /--trust <CA file>.*keys\/verifier-ca\.pem/,
    ],
    [
      'a request object whose client_id differs from the link',
      () => ({ clientId: hashClientId(), make: () => sign(payload('x509_san_dns:localhost')) }),
      /client_id/,
    ],
    [
      'direct_post.jwt with no usable encryption key',
      () => ({
        clientId: hashClientId(),
        make: () =>
          sign(payload(hashClientId(), { client_metadata: { jwks: { keys: [{ ...encPublic, use: 'sig' }] } } })),
      }),
      /jwks/,
    ],
    [
      'direct_post.jwt with no content encryption in common',
      () => ({
        clientId: hashClientId(),
        make: () =>
          sign(
            payload(hashClientId(), {
              client_metadata: {
                jwks: { keys: [encPublic] },
                encrypted_response_enc_values_supported: ['A128CBC-HS256'],
              },
            }),
          ),
      }),
      /content encryption/,
    ],
  ])('refuses %s, and sends the verifier nothing', async (_name, setup, message) => {
    const { clientId, method, make, trust: given } = setup();
    serving(make);
    const wallet = await open();
    const error = await wallet
      .present(link(clientId, method), given === null ? {} : { trust: given ?? trust })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WalletError);
    expect((error as Error).message).toMatch(message);
    expect(responses).toEqual([]);
  });

  it('refuses a request_uri_method other than get or post before fetching anything', async () => {
    serving(() => sign(payload(hashClientId())));
    const wallet = await open();
    await expect(wallet.present(`${link(hashClientId())}&request_uri_method=put`, { trust })).rejects.toThrow(
      /invalid_request_uri_method/,
    );
    expect(requests).toEqual([]);
  });

  it('follows no redirect from the request URI (§5.10.1)', async () => {
    serveRequest = async () => ({ status: 302, body: '', headers: { location: `${base}/elsewhere` } });
    await expect((await open()).present(link(hashClientId(), 'post'), { trust })).rejects.toThrow(/HTTP 302/);
  });

  it('keeps the redirect_uri rules for unsigned development requests', async () => {
    const clientId = `redirect_uri:${local}/response`;
    serving(() =>
      unsignedJwt(payload(clientId, { response_mode: 'direct_post' }), { alg: 'none', typ: 'oauth-authz-req+jwt' }),
    );
    expect((await (await open()).present(link(clientId))).status).toBe(200);
    serving(async () => sign(payload(clientId, { response_mode: 'direct_post' })));
    await expect((await open()).present(link(clientId), { trust })).rejects.toThrow(/must not be signed/);
  });

  it('fetches an unsigned redirect_uri request by POST without claiming to verify signatures (§5.10)', async () => {
    const clientId = `redirect_uri:${local}/response`;
    serving((nonce) =>
      unsignedJwt(payload(clientId, { wallet_nonce: nonce }), { alg: 'none', typ: 'oauth-authz-req+jwt' }),
    );
    expect((await (await open()).present(link(clientId, 'post'))).status).toBe(200);
    const metadata = JSON.parse(requests[0].form.get('wallet_metadata')!) as Record<string, unknown>;
    expect(metadata).not.toHaveProperty('request_object_signing_alg_values_supported');
    expect(metadata).toHaveProperty('authorization_encryption_alg_values_supported');
    expect((await decrypt(responses[0].form.get('response')!)).body).toMatchObject({ state: 'state-1' });
  });
});

describe('encrypted answers (direct_post.jwt)', () => {
  it('chooses a key for encryption, the first enc both support, and the key id', async () => {
    const sigKey = { ...encPublic, kid: 'sig-1', use: 'sig' };
    serving(() =>
      sign(
        payload(hashClientId(), {
          client_metadata: {
            jwks: { keys: [sigKey, encPublic] },
            encrypted_response_enc_values_supported: ['A256GCM'],
          },
        }),
      ),
    );
    const request = await resolveRequest(link(hashClientId()), fetch, { trust });
    expect(request.encryption).toEqual({ jwk: encPublic, enc: 'A256GCM' });
    expect(request.verifierSubject).toBe('CN=localhost');
  });

  it('encrypts with A128GCM when the verifier names no enc (§8.3 default)', async () => {
    serving(() => sign(payload(hashClientId(), { client_metadata: { jwks: { keys: [encPublic] } } })));
    await (await open()).present(link(hashClientId()), { trust });
    expect(decodeProtectedHeader(responses[0].form.get('response')!)).toMatchObject({
      alg: 'ECDH-ES',
      enc: 'A128GCM',
      kid: 'enc-1',
    });
  });

  it('encrypts the access_denied it sends when nothing matches, and says where the browser goes on', async () => {
    const other = { id: 'Other', format: 'dc+sd-jwt', meta: { vct_values: ['https://vc.example.com/types/Other'] } };
    serving(() => sign(payload(hashClientId(), { dcql_query: { credentials: [other] } })));
    answerResponse = () => ({ status: 200, body: { redirect_uri: `${local}/cb#response_code=xyz` } });
    await expect((await open()).present(link(hashClientId()), { trust })).rejects.toThrow(
      /no credential in the wallet matches .*Other.*open this address in the browser to go back: .*response_code=xyz/,
    );
    expect([...responses[0].form.keys()]).toEqual(['response']);
    expect((await decrypt(responses[0].form.get('response')!)).body).toEqual({
      error: 'access_denied',
      error_description: 'no matching credential in the wallet',
      state: 'state-1',
    });
  });
});

describe('the present command against a HAIP verifier', () => {
  it('reads --trust (PEM) and prints where the browser goes on', async () => {
    const caFile = join(dir, 'verifier-ca.pem');
    await writeFile(caFile, caPem);
    serving((nonce) => sign(payload('x509_san_dns:localhost', { wallet_nonce: nonce })));
    answerResponse = () => ({ status: 200, body: { redirect_uri: `${local}/cb#response_code=abc` } });
    const lines: string[] = [];
    await run(['present', link('x509_san_dns:localhost', 'post'), '--trust', caFile, '--wallet', walletFile], (line) =>
      lines.push(line),
    );
    expect(lines).toEqual([
      'presented to CN=localhost: the verifier accepted the presentation',
      `Open this address in the browser to finish: ${local}/cb#response_code=abc`,
    ]);
  });

  it('says what is wrong with a --trust file', async () => {
    serving(() => sign(payload(hashClientId())));
    await expect(
      run(['present', link(hashClientId()), '--trust', join(dir, 'missing.pem'), '--wallet', walletFile], () => {}),
    ).rejects.toThrow(/--trust .*missing\.pem: no such file/);
    await writeFile(join(dir, 'empty.pem'), 'hello');
    await expect(
      run(['present', link(hashClientId()), '--trust', join(dir, 'empty.pem'), '--wallet', walletFile], () => {}),
    ).rejects.toThrow(/no PEM certificate/);
  });

  it("reports the verifier's refusal", async () => {
    await writeFile(join(dir, 'ca.pem'), caPem);
    serving(() => sign(payload(hashClientId())));
    answerResponse = () => ({
      status: 400,
      body: { error: 'invalid_request', error_description: 'the presentation is not bound to this request' },
    });
    await expect(
      run(['present', link(hashClientId()), '--wallet', walletFile, `--trust=${join(dir, 'ca.pem')}`], () => {}),
    ).rejects.toThrow(
      'the verifier refused the presentation: invalid_request: the presentation is not bound to this request',
    );
  });

  it('parses --trust for present only', () => {
    expect(parseArgs(['present', 'openid4vp://?x', '--trust', 'ca.pem'])).toMatchObject({
      command: 'present',
      requestUri: 'openid4vp://?x',
      trust: 'ca.pem',
    });
    expect(parseArgs(['present', 'openid4vp://?x', '--trust=ca.pem', '--wallet', 'w.json'])).toEqual({
      command: 'present',
      requestUri: 'openid4vp://?x',
      trust: 'ca.pem',
      wallet: 'w.json',
    });
    expect(() => parseArgs(['present', 'openid4vp://?x', '--trust'])).toThrow(/needs a value/);
    expect(() => parseArgs(['receive', 'openid-credential-offer://?x', '--trust', 'ca.pem'])).toThrow(/no --trust/);
    expect(() => parseArgs(['list', '--trust', 'ca.pem'])).toThrow();
  });
});
