import { createServer, type Server } from 'node:http';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, SignJWT, type JWK } from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { leafNamesIssuer } from '../../src/wallet/certificates.js';
import { parseArgs } from '../../src/wallet/cli.js';
import { WalletError } from '../../src/wallet/errors.js';
import { checkIssuerX5c, verifyReceivedCredential } from '../../src/wallet/verifyCredential.js';
import { makeCert, type TestCert } from '../helpers/pki.js';
import { issueWithX5c } from '../helpers/sdjwt.js';

/**
 * The dev wallet's check of a received SD-JWT VC's `x5c` (SD-JWT VC §3.5, HAIP 1.0 §6.1.1): certificates
 * built with @peculiar/x509 (test/helpers/pki.ts), credentials signed with jose (test/helpers/sdjwt.ts), the
 * issuer's metadata served over real HTTP on 127.0.0.1.
 */

const DAY = 86_400_000;
const VCT = 'https://vc.example.com/types/EmployeeBadge';
const ATTRIBUTES = { FirstName: 'Ada', LastName: 'Lovelace' };

let server: Server;
let iss: string;
/** what /.well-known/jwt-vc-issuer/issuer publishes; undefined: 404 */
let published: JWK[] | undefined;
let metadataFetches: number;

let root: TestCert;
let intermediate: TestCert;
let leaf: TestCert;
let otherRoot: TestCert;
let holderPublic: JWK;

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/.well-known/jwt-vc-issuer/issuer' && published) {
      metadataFetches++;
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ issuer: iss, jwks: { keys: published } }));
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  iss = `http://127.0.0.1:${(server.address() as { port: number }).port}/issuer`;

  root = await makeCert({ subject: 'CN=Test Issuer Root', ca: true });
  intermediate = await makeCert({ subject: 'CN=Test Issuer Intermediate', ca: true, issuer: root });
  leaf = await makeCert({
    subject: 'CN=Test Issuer',
    issuer: intermediate,
    san: [
      { type: 'url', value: iss },
      { type: 'ip', value: '127.0.0.1' },
    ],
  });
  otherRoot = await makeCert({ subject: 'CN=Test Issuer Root', ca: true });
  holderPublic = await exportJWK((await generateKeyPair('ES256')).publicKey);
});

afterAll(async () => {
  await new Promise((done) => server.close(done));
});

beforeEach(() => {
  published = undefined;
  metadataFetches = 0;
});

const publicOf = async (cert: TestCert) => exportJWK(cert.keys.publicKey);
const issue = (x5c: string[], key: JWK = leaf.privateJwk) =>
  issueWithX5c({ x5c, key, iss, vct: VCT, attributes: ATTRIBUTES, holder: holderPublic });
const receive = (credential: string, issuerTrust?: Uint8Array[]) =>
  verifyReceivedCredential(
    credential,
    { credentialIssuer: iss, vct: VCT, holderPublicJwk: holderPublic, ...(issuerTrust ? { issuerTrust } : {}) },
    fetch,
  );
const refusal = async (promise: Promise<unknown>) => {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WalletError);
  return (error as Error).message;
};

describe('a credential with a good x5c chain', () => {
  it('is accepted under a trusted issuer CA without asking the issuer for its keys', async () => {
    const verified = await receive(await issue([leaf.b64, intermediate.b64]), [root.der]);
    expect(verified).toMatchObject({ issuer: iss, vct: VCT, claims: ATTRIBUTES });
    expect(metadataFetches).toBe(0);
  });

  it('is accepted with the root at its end, when that root is trusted', async () => {
    expect((await receive(await issue([leaf.b64, intermediate.b64, root.b64]), [root.der])).claims).toEqual(ATTRIBUTES);
  });

  it('is accepted without issuer trust when the leaf key is one the issuer publishes', async () => {
    published = [{ ...(await publicOf(leaf)), kid: 'k1' }];
    expect((await receive(await issue([leaf.b64, intermediate.b64]))).claims).toEqual(ATTRIBUTES);
    expect(metadataFetches).toBe(1);
  });

  it('is refused without issuer trust when the issuer does not publish the leaf key', async () => {
    published = [await exportJWK((await generateKeyPair('ES256')).publicKey)];
    expect(await refusal(receive(await issue([leaf.b64, intermediate.b64])))).toMatch(
      /x5c leaf certificate is not for a key the issuer publishes.*--issuer-trust/,
    );
  });

  it('is refused without issuer trust when the issuer publishes no metadata, with a hint', async () => {
    expect(await refusal(receive(await issue([leaf.b64, intermediate.b64])))).toMatch(/HTTP 404.*--issuer-trust/);
  });

  it('is refused when the chain ends at a CA the wallet does not trust', async () => {
    published = [await publicOf(leaf)];
    expect(await refusal(receive(await issue([leaf.b64, intermediate.b64]), [otherRoot.der]))).toMatch(
      /x5c\) is refused: the chain does not end at a trusted root/,
    );
  });
});

describe('a credential whose x5c is inconsistent is refused', () => {
  beforeEach(async () => {
    // the issuer publishes the leaf key: every refusal below comes from the chain itself
    published = [await publicOf(leaf)];
  });

  it.each<[string, () => Promise<{ x5c: string[]; key?: JWK }>, RegExp]>([
    [
      'the chain in the wrong order (the CA first)',
      async () => ({ x5c: [intermediate.b64, leaf.b64] }),
      /x5c\) is refused: the first certificate is a CA, not a leaf: the chain must list the leaf first/,
    ],
    [
      'intermediates swapped',
      async () => {
        const upper = await makeCert({ subject: 'CN=Upper CA', ca: true, issuer: root });
        const lower = await makeCert({ subject: 'CN=Lower CA', ca: true, issuer: upper });
        const low = await makeCert({ subject: 'CN=Test Issuer', issuer: lower, san: [{ type: 'url', value: iss }] });
        published = [await publicOf(low)];
        return { x5c: [low.b64, upper.b64, lower.b64], key: low.privateJwk };
      },
      /x5c\) is refused: the chain is not in order: certificate 2 did not sign the leaf certificate/,
    ],
    [
      "a signature by another key than the leaf's",
      async () => ({ x5c: [leaf.b64, intermediate.b64], key: (await makeCert({ subject: 'CN=Other' })).privateJwk }),
      /not signed by the key of its x5c leaf certificate/,
    ],
    [
      'a leaf that names another issuer',
      async () => {
        const other = await makeCert({
          subject: 'CN=Other Issuer',
          issuer: intermediate,
          san: [
            { type: 'url', value: 'https://other.example/issuer' },
            { type: 'dns', value: 'other.example' },
          ],
        });
        published = [await publicOf(other)];
        return { x5c: [other.b64, intermediate.b64], key: other.privateJwk };
      },
      /x5c leaf certificate does not name its issuer http:\/\/127\.0\.0\.1:\d+\/issuer/,
    ],
    [
      'an expired leaf',
      async () => {
        const expired = await makeCert({
          subject: 'CN=Test Issuer',
          issuer: intermediate,
          san: [{ type: 'url', value: iss }],
          notBefore: new Date(Date.now() - 30 * DAY),
          notAfter: new Date(Date.now() - DAY),
        });
        published = [await publicOf(expired)];
        return { x5c: [expired.b64, intermediate.b64], key: expired.privateJwk };
      },
      /x5c\) is refused: the leaf certificate has expired/,
    ],
    [
      'a leaf whose issuer is left out',
      async () => ({ x5c: [leaf.b64, root.b64] }),
      /x5c\) is refused: the chain is not in order: certificate 2 did not sign the leaf certificate/,
    ],
    [
      'a leaf signed by a certificate that is no CA',
      async () => {
        const notCa = await makeCert({ subject: 'CN=Not a CA', issuer: intermediate });
        const under = await makeCert({ subject: 'CN=Test Issuer', issuer: notCa, san: [{ type: 'url', value: iss }] });
        published = [await publicOf(under)];
        return { x5c: [under.b64, notCa.b64], key: under.privateJwk };
      },
      /x5c\) is refused: certificate 2 of the chain signs a certificate but is not a CA/,
    ],
    [
      'an x5c that is not base64 DER',
      async () => ({ x5c: ['bm90IGEgY2VydGlmaWNhdGU='] }),
      /x5c header does not hold readable certificates/,
    ],
  ])('%s', async (_name, make, message) => {
    const { x5c, key } = await make();
    expect(await refusal(receive(await issue(x5c, key), [root.der]))).toMatch(message);
    expect(await refusal(receive(await issue(x5c, key)))).toMatch(message);
  });

  it("refuses a kid naming another published key than the leaf's, when nothing anchors the chain", async () => {
    const other = { ...(await exportJWK((await generateKeyPair('ES256')).publicKey)), kid: 'other' };
    published = [other, { ...(await publicOf(leaf)), kid: 'leaf' }];
    const now = Math.floor(Date.now() / 1000);
    const jwt = await new SignJWT({
      iss,
      vct: VCT,
      iat: now,
      exp: now + 600,
      cnf: { jwk: holderPublic },
      _sd_alg: 'sha-256',
    })
      .setProtectedHeader({ alg: 'ES256', typ: 'dc+sd-jwt', kid: 'other', x5c: [leaf.b64, intermediate.b64] })
      .sign(await importJWK(leaf.privateJwk, 'ES256'));
    expect(await refusal(receive(`${jwt}~`))).toMatch(/kid names another key than its x5c leaf/);
  });
});

describe('the leaf names the issuer (SD-JWT VC §3.5)', () => {
  it('by a subjectAltName URI equal to iss, or by its host as dNSName or iPAddress', async () => {
    const byDns = await makeCert({ subject: 'CN=x', san: [{ type: 'dns', value: 'issuer.example' }] });
    expect(leafNamesIssuer(byDns.der, 'https://issuer.example/wallet')).toBe(true);
    expect(leafNamesIssuer(byDns.der, 'https://evil.example/wallet')).toBe(false);
    const byUri = await makeCert({ subject: 'CN=x', san: [{ type: 'url', value: 'https://issuer.example/wallet' }] });
    expect(leafNamesIssuer(byUri.der, 'https://issuer.example/wallet')).toBe(true);
    expect(leafNamesIssuer(byUri.der, 'https://issuer.example/other')).toBe(false);
    const byIp = await makeCert({ subject: 'CN=x', san: [{ type: 'ip', value: '127.0.0.1' }] });
    expect(leafNamesIssuer(byIp.der, 'http://127.0.0.1:8080/wallet')).toBe(true);
    expect(leafNamesIssuer(byIp.der, 'http://127.0.0.2:8080/wallet')).toBe(false);
  });

  it('checkIssuerX5c returns the leaf key and whether a trusted CA anchors the chain', async () => {
    const thumbprint = await calculateJwkThumbprint(await publicOf(leaf));
    const anchored = await checkIssuerX5c([leaf.b64, intermediate.b64], iss, { trust: [root.der] });
    expect(anchored.anchored).toBe(true);
    expect(await calculateJwkThumbprint(anchored.jwk)).toBe(thumbprint);
    expect((await checkIssuerX5c([leaf.b64, intermediate.b64], iss)).anchored).toBe(false);
    // validity is judged at the given time: the same chain after its leaf's end
    await expect(
      checkIssuerX5c([leaf.b64, intermediate.b64], iss, { now: new Date(Date.now() + 500 * DAY) }),
    ).rejects.toThrow(/leaf certificate has expired/);
  });
});

describe('credentials without x5c', () => {
  it("keep working by the issuer's published key named by kid", async () => {
    const key = await generateKeyPair('ES256', { extractable: true });
    published = [{ ...(await exportJWK(key.publicKey)), kid: 'plain-1' }];
    const now = Math.floor(Date.now() / 1000);
    const jwt = await new SignJWT({
      iss,
      vct: VCT,
      iat: now,
      exp: now + 600,
      cnf: { jwk: holderPublic },
      _sd_alg: 'sha-256',
    })
      .setProtectedHeader({ alg: 'ES256', typ: 'dc+sd-jwt', kid: 'plain-1' })
      .sign(await importJWK(await exportJWK(key.privateKey), 'ES256'));
    expect(await receive(`${jwt}~`, [root.der])).toMatchObject({ issuer: iss, vct: VCT });
    expect(metadataFetches).toBe(1);
  });
});

describe('the receive command', () => {
  it('reads --issuer-trust for receive only', () => {
    expect(parseArgs(['receive', 'openid-credential-offer://?x', '--issuer-trust', 'issuer-ca.pem'])).toMatchObject({
      command: 'receive',
      issuerTrust: 'issuer-ca.pem',
    });
    expect(parseArgs(['receive', 'openid-credential-offer://?x', '--issuer-trust=ca.pem', '--pin', '1'])).toMatchObject(
      { issuerTrust: 'ca.pem', pin: '1' },
    );
    expect(() => parseArgs(['present', 'openid4vp://?x', '--issuer-trust', 'ca.pem'])).toThrow(/receive only/);
    expect(() => parseArgs(['list', '--issuer-trust', 'ca.pem'])).toThrow(/receive only/);
  });
});
