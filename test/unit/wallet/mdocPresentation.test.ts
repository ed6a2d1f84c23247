import { createServer, type Server } from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  base64url,
  calculateJwkThumbprint,
  compactDecrypt,
  exportJWK,
  generateKeyPair,
  importPKCS8,
  SignJWT,
  type JWK,
} from 'jose';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { generateVerifierCertificates, readPemCertificates, x509Hash } from '../../../src/keys/x509.js';
import { verifyMdocPresentation } from '../../../src/verification/mdoc.js';
import { run } from '../../../src/wallet/cli.js';
import { DevWallet } from '../../../src/wallet/holder.js';
import { createTestMdocIssuer, verifyWithAuth0 } from '../../helpers/mdoc.js';

/**
 * The dev wallet holds an ISO mdoc and presents it (OpenID4VP 1.0 §B.2) when the verifier accepts a type
 * as an SD-JWT VC or as an mdoc (§6.2 credential_sets): a DeviceResponse signed over the OpenID4VP handover
 * of this request, which the server's own mdoc verification accepts. Real crypto, real HTTP.
 */

const DOCTYPE = 'com.example.employee.1';
const NAMESPACE = 'com.example.employee.1';
const VCT = 'https://vc.example.com/types/EmployeeBadge';

let issuer: Awaited<ReturnType<typeof createTestMdocIssuer>>;
let deviceKey: JWK;
let issuerSigned: string;
let chain: Uint8Array[];
let trust: Uint8Array[];
let signingKey: CryptoKey;
let encPrivate: CryptoKey;
let encPublic: JWK;
let server: Server;
let base: string;
let serveRequest: (walletNonce: string | null) => Promise<string>;
let responses: URLSearchParams[];

beforeAll(async () => {
  issuer = await createTestMdocIssuer();
  const device = await generateKeyPair('ES256', { extractable: true });
  deviceKey = await exportJWK(device.privateKey);
  ({ issuerSigned } = await issuer.issue({
    doctype: DOCTYPE,
    namespace: NAMESPACE,
    claims: { FirstName: 'Ada', LastName: 'Lovelace', Email: 'ada@example.com' },
    deviceKey: await exportJWK(device.publicKey),
  }));

  const certs = await generateVerifierCertificates('localhost');
  trust = readPemCertificates(certs.caCertificate, 'ca');
  chain = readPemCertificates(certs.chain, 'chain');
  signingKey = await importPKCS8(certs.key, 'ES256');
  const enc = await generateKeyPair('ECDH-ES', { crv: 'P-256', extractable: true });
  encPrivate = enc.privateKey;
  encPublic = { ...(await exportJWK(enc.publicKey)), use: 'enc', alg: 'ECDH-ES', kid: 'enc-1' };

  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      if (req.url === '/request') {
        res
          .writeHead(200, { 'content-type': 'application/oauth-authz-req+jwt' })
          .end(await serveRequest(form.get('wallet_nonce')));
      } else if (req.url === '/response') {
        responses.push(form);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      } else res.writeHead(404).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://localhost:${(server.address() as { port: number }).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

let dir: string;
let walletFile: string;
beforeEach(async () => {
  responses = [];
  dir = await mkdtemp(join(tmpdir(), 'wallet-mdoc-'));
  walletFile = join(dir, 'wallet.json');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const clientId = () => `x509_hash:${x509Hash(chain[0])}`;
const link = () =>
  `openid4vp://?client_id=${encodeURIComponent(clientId())}&request_uri=${encodeURIComponent(`${base}/request`)}&request_uri_method=post`;

/** The query the server makes for a type it takes in both formats (src/verification/dcql.ts dcqlQueryFor). */
const dcqlQuery = {
  credentials: [
    {
      id: 'EmployeeBadge',
      format: 'dc+sd-jwt',
      meta: { vct_values: [VCT] },
      claims: [
        { id: 'FirstName', path: ['FirstName'] },
        { id: 'LastName', path: ['LastName'] },
      ],
    },
    {
      id: 'EmployeeBadge-mdoc',
      format: 'mso_mdoc',
      meta: { doctype_value: DOCTYPE },
      claims: [
        { id: 'FirstName', path: [NAMESPACE, 'FirstName'], intent_to_retain: false },
        { id: 'LastName', path: [NAMESPACE, 'LastName'], intent_to_retain: false },
      ],
    },
  ],
  credential_sets: [{ options: [['EmployeeBadge'], ['EmployeeBadge-mdoc']], required: true }],
};

function requestObject(responseMode: 'direct_post' | 'direct_post.jwt') {
  return async (walletNonce: string | null) => {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({
      aud: 'https://self-issued.me/v2',
      response_type: 'vp_token',
      response_mode: responseMode,
      client_id: clientId(),
      response_uri: `${base}/response`,
      nonce: 'nonce-mdoc',
      state: 'state-mdoc',
      dcql_query: dcqlQuery,
      client_metadata: {
        vp_formats_supported: { mso_mdoc: { issuerauth_alg_values: [-7], deviceauth_alg_values: [-7] } },
        jwks: { keys: [encPublic] },
        encrypted_response_enc_values_supported: ['A128GCM'],
      },
      iat: now,
      exp: now + 300,
      ...(walletNonce ? { wallet_nonce: walletNonce } : {}),
    })
      .setProtectedHeader({
        alg: 'ES256',
        typ: 'oauth-authz-req+jwt',
        x5c: chain.map((der) => Buffer.from(der).toString('base64')),
      })
      .sign(signingKey);
  };
}

const expectations = (jwkThumbprint?: Uint8Array) => ({
  doctype: DOCTYPE,
  namespace: NAMESPACE,
  clientId: clientId(),
  nonce: 'nonce-mdoc',
  responseUri: `${base}/response`,
  ...(jwkThumbprint ? { jwkThumbprint } : {}),
  trustAnchors: [issuer.iacaDer],
});

describe('holding an mdoc', () => {
  it('imports it with its device key and reads its elements', async () => {
    const wallet = await DevWallet.open(walletFile);
    const stored = await wallet.importMdoc({ issuerSigned, doctype: DOCTYPE, deviceKey });
    expect(stored).toMatchObject({
      format: 'mso_mdoc',
      credential: issuerSigned,
      doctype: DOCTYPE,
      issuer: 'mdoc issuer',
      holderKey: deviceKey,
      claims: { [NAMESPACE]: { FirstName: 'Ada', LastName: 'Lovelace', Email: 'ada@example.com' } },
    });
    expect(stored).not.toHaveProperty('vct');
    expect((await DevWallet.open(walletFile)).list()).toEqual([stored]);
  });

  it('imports it from the command line (import-mdoc <file.json>)', async () => {
    const file = join(dir, 'mdoc.json');
    await writeFile(file, JSON.stringify({ issuerSigned, doctype: DOCTYPE, deviceKey }));
    const lines: string[] = [];
    await run(['import-mdoc', file, '--wallet', walletFile], (line) => lines.push(line));
    expect(lines[0]).toMatch(new RegExp(`^imported into .*\\n${DOCTYPE.replace(/\./g, '\\.')} \\(mdoc\\)`));
    expect(lines[0]).toContain(`    ${NAMESPACE}:\n      FirstName: Ada`);
  });

  it('refuses what is not an IssuerSigned, or another doctype than its MSO names', async () => {
    const wallet = await DevWallet.open(walletFile);
    await expect(
      wallet.importMdoc({ issuerSigned: base64url.encode('hello'), doctype: DOCTYPE, deviceKey }),
    ).rejects.toThrow(/mdoc cannot be read/);
    await expect(wallet.importMdoc({ issuerSigned, doctype: 'org.iso.18013.5.1.mDL', deviceKey })).rejects.toThrow(
      `the mdoc is of doctype ${DOCTYPE}, not org.iso.18013.5.1.mDL`,
    );
    expect(wallet.list()).toEqual([]);
  });
});

describe('presenting an mdoc', () => {
  it('answers the mdoc option of a credential set, encrypted, bound to the request and to the key it encrypts to', async () => {
    const wallet = await DevWallet.open(walletFile);
    await wallet.importMdoc({ issuerSigned, doctype: DOCTYPE, deviceKey });
    serveRequest = requestObject('direct_post.jwt');
    expect((await wallet.present(link(), { trust })).status).toBe(200);

    const { plaintext, protectedHeader } = await compactDecrypt(responses[0].get('response')!, encPrivate);
    expect(protectedHeader).toMatchObject({ alg: 'ECDH-ES', enc: 'A128GCM', kid: 'enc-1' });
    const body = JSON.parse(new TextDecoder().decode(plaintext)) as {
      vp_token: Record<string, string[]>;
      state: string;
    };
    expect(Object.keys(body.vp_token)).toEqual(['EmployeeBadge-mdoc']);
    expect(body.state).toBe('state-mdoc');
    const [deviceResponse] = body.vp_token['EmployeeBadge-mdoc'];

    // §B.2.6.1: the handover names the thumbprint of the verifier's encryption key
    const thumbprint = base64url.decode(await calculateJwkThumbprint(encPublic, 'sha256'));
    const verified = await verifyMdocPresentation(deviceResponse, expectations(thumbprint));
    expect(verified.claims).toEqual({ FirstName: 'Ada', LastName: 'Lovelace' }); // Email held back: not asked for
    // and so does an implementation that shares no code with the wallet (@auth0/mdl)
    const { trustAnchors: _roots, doctype: _doctype, ...handover } = expectations(thumbprint);
    expect(await verifyWithAuth0(deviceResponse, { iacaPem: issuer.iacaPem, ...handover })).toEqual({
      FirstName: 'Ada',
      LastName: 'Lovelace',
    });
    await expect(verifyMdocPresentation(deviceResponse, expectations())).rejects.toThrow(/device signature/);
    await expect(
      verifyMdocPresentation(deviceResponse, { ...expectations(thumbprint), nonce: 'another' }),
    ).rejects.toThrow(/device signature/);
  });

  it('binds no key thumbprint when the answer is not encrypted (direct_post)', async () => {
    const wallet = await DevWallet.open(walletFile);
    await wallet.importMdoc({ issuerSigned, doctype: DOCTYPE, deviceKey });
    serveRequest = requestObject('direct_post');
    expect((await wallet.present(link(), { trust })).status).toBe(200);
    const vpToken = JSON.parse(responses[0].get('vp_token')!) as Record<string, string[]>;
    const verified = await verifyMdocPresentation(vpToken['EmployeeBadge-mdoc'][0], expectations());
    expect(verified.disclosed.sort()).toEqual(['FirstName', 'LastName']);
  });
});
