import 'reflect-metadata';
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  webcrypto,
  X509Certificate as NodeCertificate,
  type KeyObject,
} from 'node:crypto';
import * as x509 from '@peculiar/x509';
import { exportJWK } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  authorityKeyIdentifier,
  certificatePublicJwk,
  checkVerifierChain,
  dnsNames,
  generateVerifierCertificates,
  issuerName,
  readPemCertificates,
  readPemPrivateKey,
  subjectKeyIdentifier,
  subjectName,
  toPem,
  verifyCertificateChain,
  X509ChainError,
  x509Hash,
  type VerifierCertificates,
} from '../../../src/keys/x509.js';

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

const DAY = 86_400_000;
const WHERE = 'verifier.certificateChain';
const P256 = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };

type Alg = Algorithm & Record<string, unknown>;
interface Issued {
  der: Uint8Array;
  cert: x509.X509Certificate;
  keys: CryptoKeyPair;
  /** the private key as node:crypto holds it */
  key: KeyObject;
  alg: Alg;
}

let serial = 1;

const parsed = (der: Uint8Array) => new x509.X509Certificate(Uint8Array.from(der));

/** A certificate built here with @peculiar/x509: self-signed when no issuer is given. */
async function issue(opts: {
  name: string;
  issuer?: Issued;
  ca?: boolean;
  pathLength?: number;
  keyUsage?: number;
  /** the subject's key algorithm (WebCrypto binds an RSA key to its hash: the issuer signs with that) */
  alg?: Alg;
  notBefore?: Date;
  notAfter?: Date;
}): Promise<Issued> {
  const alg = opts.alg ?? P256;
  const keys = (await webcrypto.subtle.generateKey(alg as EcKeyGenParams, true, ['sign', 'verify'])) as CryptoKeyPair;
  const signer = opts.issuer ?? { keys, alg };
  const signingAlgorithm = signer.alg.name === 'RSA-PSS' ? { ...signer.alg, saltLength: 32 } : signer.alg;
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: (serial++).toString(16).padStart(2, '0'),
    subject: opts.name,
    issuer: opts.issuer?.cert.subject ?? opts.name,
    notBefore: opts.notBefore ?? new Date(Date.now() - DAY),
    notAfter: opts.notAfter ?? new Date(Date.now() + 30 * DAY),
    publicKey: keys.publicKey,
    signingKey: signer.keys.privateKey,
    signingAlgorithm,
    extensions: [
      new x509.BasicConstraintsExtension(opts.ca ?? false, opts.pathLength, true),
      new x509.KeyUsagesExtension(
        opts.keyUsage ?? (opts.ca ? x509.KeyUsageFlags.keyCertSign : x509.KeyUsageFlags.digitalSignature),
        true,
      ),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      await x509.AuthorityKeyIdentifierExtension.create(signer.keys.publicKey),
    ],
  });
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  return {
    der: new Uint8Array(cert.rawData),
    cert,
    keys,
    key: createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' }),
    alg,
  };
}

/** the message of the X509ChainError the promise rejects with */
async function chainError(promise: Promise<unknown>): Promise<string> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(X509ChainError);
  return (err as X509ChainError).message;
}

describe('generateVerifierCertificates: a local CA and a reader leaf for the verifier', () => {
  let generated: VerifierCertificates;
  let ca: Uint8Array;
  let leaf: Uint8Array;
  let key: KeyObject;

  beforeAll(async () => {
    generated = await generateVerifierCertificates('vc.example.com');
    [ca] = readPemCertificates(generated.caCertificate, 'ca');
    [leaf] = readPemCertificates(generated.chain, 'chain');
    key = readPemPrivateKey(generated.key, 'key');
  });

  it('HAIP 1.0: the chain is the leaf alone (no trust anchor), its key is the PKCS#8 P-256 key, and it passes the start-up checks', async () => {
    expect(readPemCertificates(generated.chain, 'chain')).toHaveLength(1);
    expect(generated.key).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
    expect(key.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
    await expect(checkVerifierChain([leaf], key, WHERE)).resolves.toBeUndefined();
  });

  it('RFC 5280 §6.1: the leaf verifies up to the generated CA', async () => {
    await expect(verifyCertificateChain([leaf], [ca])).resolves.toBeUndefined();
  });

  it('OpenID4VP 1.0 §5.9.3 x509_hash: base64url of the SHA-256 of the DER leaf', () => {
    expect(x509Hash(leaf)).toBe(createHash('sha256').update(leaf).digest('base64url'));
    expect(x509Hash(leaf)).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('OpenID4VP 1.0 §5.9.3 x509_san_dns: the leaf names the host as its only dNSName (RFC 5280 §4.2.1.6)', () => {
    expect(dnsNames(leaf)).toEqual(['vc.example.com']);
    expect(dnsNames(ca)).toEqual([]);
  });

  it('OpenID4VP 1.0 §6.1.1.1 aki: the leaf AuthorityKeyIdentifier is the CA SubjectKeyIdentifier (RFC 5280 §4.2.1.1, §4.2.1.2)', () => {
    const ski = subjectKeyIdentifier(ca);
    expect(ski).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(authorityKeyIdentifier(leaf)).toBe(ski);
    expect(authorityKeyIdentifier(ca)).toBeUndefined();
    const nodeSki = parsed(ca).getExtension(x509.SubjectKeyIdentifierExtension)!.keyId;
    expect(Buffer.from(ski!, 'base64url').toString('hex')).toBe(nodeSki);
  });

  it('the leaf public JWK is the public part of the private key', async () => {
    const { kty, crv, x, y } = await exportJWK(createPublicKey(key));
    expect(await certificatePublicJwk(leaf)).toEqual({ kty, crv, x, y });
  });

  it('ISO/IEC 18013-5 Annex B: the leaf is a reader authentication certificate (keyUsage digitalSignature, EKU 1.0.18013.5.1.6), not a CA', () => {
    const cert = parsed(leaf);
    const ku = cert.getExtension(x509.KeyUsagesExtension)!;
    expect(ku.critical).toBe(true);
    expect(ku.usages).toBe(x509.KeyUsageFlags.digitalSignature);
    const eku = cert.getExtension(x509.ExtendedKeyUsageExtension)!;
    expect(eku.usages).toEqual(['1.0.18013.5.1.6']);
    expect(eku.critical).toBe(true);
    expect(cert.getExtension(x509.BasicConstraintsExtension)!.ca).toBe(false);
    expect(new NodeCertificate(leaf).ca).toBe(false);
    expect(subjectName(leaf)).toBe('CN=vc.example.com');
    expect(issuerName(leaf)).toBe(subjectName(ca));
  });

  it('RFC 5280 §4.2.1.9, §4.2.1.3: the CA is self-signed, cA=true pathLen 0 critical, keyCertSign+cRLSign critical', () => {
    const cert = parsed(ca);
    expect(subjectName(ca)).toBe('CN=vc.example.com local verifier CA (development)');
    expect(issuerName(ca)).toBe(subjectName(ca));
    const bc = cert.getExtension(x509.BasicConstraintsExtension)!;
    expect([bc.ca, bc.pathLength, bc.critical]).toEqual([true, 0, true]);
    const ku = cert.getExtension(x509.KeyUsagesExtension)!;
    expect([ku.usages, ku.critical]).toEqual([x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true]);
    const node = new NodeCertificate(ca);
    expect(node.verify(node.publicKey)).toBe(true);
  });

  it('RFC 5280 §4.1.2.2, §4.1.2.5: positive random serials; the leaf lasts a year from a minute ago, the CA ten years', async () => {
    const now = new Date('2030-01-01T00:00:00Z');
    const other = await generateVerifierCertificates('vc.example.com', { now });
    const [c] = readPemCertificates(other.caCertificate, 'ca');
    const [l] = readPemCertificates(other.chain, 'chain');
    const [cc, lc] = [parsed(c), parsed(l)];
    expect(lc.notBefore.toISOString()).toBe('2029-12-31T23:59:00.000Z');
    expect(lc.notAfter.getTime() - now.getTime()).toBe(365 * DAY);
    expect(cc.notAfter.getTime() - now.getTime()).toBe(3650 * DAY);
    expect(cc.serialNumber).not.toBe(lc.serialNumber);
    for (const s of [cc.serialNumber, lc.serialNumber]) expect(s).toMatch(/^01[0-9a-f]{30}$/);
  });

  it('RFC 5280 §4.2.1.6: an IP literal host gets an iPAddress subjectAltName and no dNSName (so x509_hash only)', async () => {
    for (const host of ['127.0.0.1', '[::1]']) {
      const g = await generateVerifierCertificates(host);
      const [l] = readPemCertificates(g.chain, 'chain');
      expect(dnsNames(l)).toEqual([]);
      const san = parsed(l).getExtension(x509.SubjectAlternativeNameExtension)!;
      expect(san.names.items.map((n) => n.type)).toEqual(['ip']);
      await expect(checkVerifierChain([l], readPemPrivateKey(g.key, 'key'), WHERE)).resolves.toBeUndefined();
    }
  });

  it('toPem: 64-character lines and a trailing newline, readable again', () => {
    const pem = toPem(leaf);
    expect(pem).toMatch(/^-----BEGIN CERTIFICATE-----\n/);
    expect(pem.endsWith('-----END CERTIFICATE-----\n')).toBe(true);
    const body = pem.split('\n').slice(1, -2);
    expect(body.slice(0, -1).every((line) => line.length === 64)).toBe(true);
    expect(readPemCertificates(pem + toPem(ca), 'both')).toEqual([leaf, ca]);
  });
});

describe('checkVerifierChain: start-up refusals of the verifier chain and key', () => {
  it('refuses a key that is not the leaf key', async () => {
    const g = await generateVerifierCertificates('vc.example.com');
    const other = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    await expect(checkVerifierChain(readPemCertificates(g.chain, 'c'), other, WHERE)).rejects.toThrow(
      `${WHERE}: the first certificate (the leaf) is not the certificate of the configured private key`,
    );
  });

  it('HAIP 1.0: refuses a chain that includes the self-signed trust anchor', async () => {
    const g = await generateVerifierCertificates('vc.example.com');
    const chain = [...readPemCertificates(g.chain, 'c'), ...readPemCertificates(g.caCertificate, 'ca')];
    await expect(checkVerifierChain(chain, readPemPrivateKey(g.key, 'k'), WHERE)).rejects.toThrow(
      `${WHERE}: certificate 2 is self-signed (a trust anchor): leave the root out of the chain`,
    );
  });

  it('RFC 5280 §4.1.2.5: refuses an expired leaf', async () => {
    const g = await generateVerifierCertificates('vc.example.com', { now: new Date(Date.now() - 400 * DAY) });
    await expect(
      checkVerifierChain(readPemCertificates(g.chain, 'c'), readPemPrivateKey(g.key, 'k'), WHERE),
    ).rejects.toThrow(/^verifier\.certificateChain: the leaf certificate has expired \(on /);
  });

  it('RFC 5280 §4.1.2.5: refuses a leaf that is not valid yet', async () => {
    const g = await generateVerifierCertificates('vc.example.com', { now: new Date(Date.now() + 2 * DAY) });
    await expect(
      checkVerifierChain(readPemCertificates(g.chain, 'c'), readPemPrivateKey(g.key, 'k'), WHERE),
    ).rejects.toThrow(/^verifier\.certificateChain: the leaf certificate is not valid until /);
  });

  it('RFC 5280 §4.2.1.9 basicConstraints: refuses a CA certificate as the leaf', async () => {
    const root = await issue({ name: 'CN=Root', ca: true });
    const intermediate = await issue({ name: 'CN=Intermediate', ca: true, issuer: root });
    await expect(checkVerifierChain([intermediate.der], intermediate.key, WHERE)).rejects.toThrow(
      `${WHERE}: the leaf certificate is a CA certificate; the first certificate must be the verifier's own`,
    );
  });

  it('HAIP 1.0 (ES256): refuses a P-384 leaf', async () => {
    const root = await issue({ name: 'CN=Root', ca: true });
    const leaf = await issue({
      name: 'CN=leaf',
      issuer: root,
      alg: { name: 'ECDSA', namedCurve: 'P-384', hash: 'SHA-256' },
    });
    await expect(checkVerifierChain([leaf.der], leaf.key, WHERE)).rejects.toThrow(
      `${WHERE}: the leaf certificate's key must be EC P-256 (ES256), not ec secp384r1`,
    );
  });

  it('RFC 5280 §6.1: refuses a chain out of order and accepts it in order', async () => {
    const root = await issue({ name: 'CN=Root', ca: true });
    const one = await issue({ name: 'CN=Intermediate 1', ca: true, issuer: root });
    const two = await issue({ name: 'CN=Intermediate 2', ca: true, issuer: one });
    const leaf = await issue({ name: 'CN=leaf', issuer: two });
    const key = leaf.key;
    await expect(checkVerifierChain([leaf.der, two.der, one.der], key, WHERE)).resolves.toBeUndefined();
    await expect(checkVerifierChain([leaf.der, one.der, two.der], key, WHERE)).rejects.toThrow(
      `${WHERE}: the chain is not in order: each certificate must be followed by the one that issued it, leaf first (the chain must be in order, leaf first)`,
    );
  });

  it('refuses an empty chain and an unreadable certificate', async () => {
    const key = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    await expect(checkVerifierChain([], key, WHERE)).rejects.toThrow(`${WHERE}: no certificate`);
    await expect(checkVerifierChain([new Uint8Array([48, 3, 2, 1, 1])], key, WHERE)).rejects.toThrow(
      `${WHERE}: certificate 1 is not a readable X.509 certificate`,
    );
  });
});

describe('verifyCertificateChain: RFC 5280 §6.1 path validation up to a trust anchor', () => {
  let root: Issued;
  let intermediate: Issued;
  let leaf: Issued;

  beforeAll(async () => {
    root = await issue({ name: 'CN=Example IACA, C=NL', ca: true });
    intermediate = await issue({ name: 'CN=Example Intermediate, C=NL', ca: true, pathLength: 0, issuer: root });
    leaf = await issue({ name: 'CN=leaf.example.com', issuer: intermediate });
  });

  it('accepts root → intermediate → leaf, with or without the anchor at the end of the chain', async () => {
    await expect(verifyCertificateChain([leaf.der, intermediate.der], [root.der])).resolves.toBeUndefined();
    await expect(verifyCertificateChain([leaf.der, intermediate.der, root.der], [root.der])).resolves.toBeUndefined();
    // a trusted intermediate is an anchor too
    await expect(verifyCertificateChain([leaf.der], [intermediate.der])).resolves.toBeUndefined();
  });

  it('OpenID4VP 1.0 §6.1.1.1 aki: AuthorityKeyIdentifier of each certificate is the SubjectKeyIdentifier of its issuer', () => {
    expect(authorityKeyIdentifier(leaf.der)).toBe(subjectKeyIdentifier(intermediate.der));
    expect(authorityKeyIdentifier(intermediate.der)).toBe(subjectKeyIdentifier(root.der));
  });

  it('subjectName and issuerName print the DN in its encoded order', () => {
    expect(subjectName(root.der)).toBe('CN=Example IACA, C=NL');
    expect(issuerName(intermediate.der)).toBe('CN=Example IACA, C=NL');
    expect(subjectName(intermediate.der)).toBe('CN=Example Intermediate, C=NL');
  });

  it('refuses a chain to an unrelated root', async () => {
    const other = await issue({ name: 'CN=Example IACA, C=NL', ca: true });
    expect(await chainError(verifyCertificateChain([leaf.der, intermediate.der], [other.der]))).toBe(
      'the chain does not end at a trusted root',
    );
    const g = await generateVerifierCertificates('vc.example.com');
    expect(await chainError(verifyCertificateChain(readPemCertificates(g.chain, 'c'), [root.der]))).toBe(
      'the chain does not end at a trusted root',
    );
  });

  it('RFC 5280 §4.1.2.5: refuses an expired or not yet valid certificate, naming it', async () => {
    const g = await generateVerifierCertificates('vc.example.com', { now: new Date(Date.now() - 400 * DAY) });
    const [ca] = readPemCertificates(g.caCertificate, 'ca');
    expect(await chainError(verifyCertificateChain(readPemCertificates(g.chain, 'c'), [ca]))).toMatch(
      /^the leaf certificate has expired \(on /,
    );
    expect(
      await chainError(
        verifyCertificateChain([leaf.der, intermediate.der], [root.der], new Date(Date.now() + 60 * DAY)),
      ),
    ).toMatch(/^the leaf certificate has expired/);
    expect(
      await chainError(
        verifyCertificateChain([leaf.der, intermediate.der], [root.der], new Date(Date.now() - 2 * DAY)),
      ),
    ).toMatch(/^the leaf certificate is not valid until /);
    const expiredIntermediate = await issue({
      name: 'CN=Old Intermediate',
      ca: true,
      issuer: root,
      notAfter: new Date(Date.now() - 1000),
    });
    const young = await issue({ name: 'CN=leaf', issuer: expiredIntermediate });
    expect(await chainError(verifyCertificateChain([young.der, expiredIntermediate.der], [root.der]))).toMatch(
      /^intermediate certificate 1 has expired/,
    );
    const expiredRoot = await issue({ name: 'CN=Old Root', ca: true, notAfter: new Date(Date.now() - 1000) });
    const under = await issue({ name: 'CN=leaf', issuer: expiredRoot });
    expect(await chainError(verifyCertificateChain([under.der], [expiredRoot.der]))).toBe(
      'the trust anchor has expired or is not valid yet',
    );
  });

  it('RFC 5280 §4.2.1.9 basicConstraints: refuses a leaf (cA=false) used as an issuer', async () => {
    const g = await generateVerifierCertificates('vc.example.com');
    const [generatedLeaf] = readPemCertificates(g.chain, 'c');
    const [ca] = readPemCertificates(g.caCertificate, 'ca');
    const pkcs8 = createPrivateKey(g.key).export({ format: 'der', type: 'pkcs8' });
    const privateKey = await webcrypto.subtle.importKey('pkcs8', pkcs8, { name: 'ECDSA', namedCurve: 'P-256' }, true, [
      'sign',
    ]);
    const issuer: Issued = {
      der: generatedLeaf,
      cert: parsed(generatedLeaf),
      keys: { privateKey, publicKey: await parsed(generatedLeaf).publicKey.export() },
      key: createPrivateKey(g.key),
      alg: P256,
    };
    const below = await issue({ name: 'CN=below', issuer });
    expect(await chainError(verifyCertificateChain([below.der, generatedLeaf], [ca]))).toBe(
      'intermediate certificate 1 is not a CA certificate (basicConstraints cA is not true) but signs the leaf certificate',
    );
  });

  it('RFC 5280 §4.2.1.9 basicConstraints: refuses a CA certificate as the leaf, and so a chain out of order', async () => {
    expect(await chainError(verifyCertificateChain([intermediate.der], [root.der]))).toBe(
      'the leaf certificate is a CA certificate (basicConstraints cA=true)',
    );
    expect(await chainError(verifyCertificateChain([intermediate.der, leaf.der], [root.der]))).toBe(
      'the leaf certificate is a CA certificate (basicConstraints cA=true)',
    );
  });

  it('RFC 7515 §4.1.6: refuses a chain whose next certificate is not the issuer (out of order)', async () => {
    const one = await issue({ name: 'CN=Intermediate 1', ca: true, issuer: root });
    const two = await issue({ name: 'CN=Intermediate 2', ca: true, issuer: one });
    const below = await issue({ name: 'CN=leaf', issuer: two });
    await expect(verifyCertificateChain([below.der, two.der, one.der], [root.der])).resolves.toBeUndefined();
    expect(await chainError(verifyCertificateChain([below.der, one.der, two.der], [root.der]))).toBe(
      'the chain is not in order: each certificate must be followed by the one that issued it, leaf first',
    );
  });

  it('RFC 5280 §4.2.1.9 pathLenConstraint: a pathLen 0 root refuses an intermediate; a pathLen 0 intermediate refuses another below it', async () => {
    const strictRoot = await issue({ name: 'CN=Strict Root', ca: true, pathLength: 0 });
    const sub = await issue({ name: 'CN=Sub CA', ca: true, issuer: strictRoot });
    const below = await issue({ name: 'CN=leaf', issuer: sub });
    expect(await chainError(verifyCertificateChain([below.der, sub.der], [strictRoot.der]))).toBe(
      'the trust anchor allows 0 intermediate certificate(s) below it (pathLenConstraint); the chain has 1',
    );
    expect(await chainError(verifyCertificateChain([below.der, sub.der, strictRoot.der], [strictRoot.der]))).toBe(
      'the trust anchor allows 0 intermediate certificate(s) below it (pathLenConstraint); the chain has 1',
    );
    const deeper = await issue({ name: 'CN=Deeper CA', ca: true, issuer: intermediate });
    const deepLeaf = await issue({ name: 'CN=leaf', issuer: deeper });
    expect(await chainError(verifyCertificateChain([deepLeaf.der, deeper.der, intermediate.der], [root.der]))).toBe(
      'intermediate certificate 2 allows 0 intermediate certificate(s) below it (pathLenConstraint); the chain has 1',
    );
  });

  it('RFC 5280 §4.2.1.3 keyUsage: refuses a CA whose keyUsage lacks keyCertSign', async () => {
    const noSign = await issue({
      name: 'CN=No keyCertSign',
      ca: true,
      keyUsage: x509.KeyUsageFlags.cRLSign,
      issuer: root,
    });
    const below = await issue({ name: 'CN=leaf', issuer: noSign });
    expect(await chainError(verifyCertificateChain([below.der, noSign.der], [root.der]))).toBe(
      'intermediate certificate 1 may not sign certificates (its keyUsage lacks keyCertSign)',
    );
  });

  it('accepts ECDSA P-384/P-521, Ed25519, RSA PKCS#1 v1.5 and RSA-PSS signatures, and refuses SHA-1', async () => {
    const rsa = { modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' };
    const algs: Alg[] = [
      { name: 'ECDSA', namedCurve: 'P-384', hash: 'SHA-384' },
      { name: 'ECDSA', namedCurve: 'P-521', hash: 'SHA-512' },
      { name: 'Ed25519' },
      { name: 'RSASSA-PKCS1-v1_5', ...rsa },
      { name: 'RSA-PSS', ...rsa },
    ];
    for (const alg of algs) {
      const anchor = await issue({ name: `CN=${alg.name} root`, ca: true, alg });
      const below = await issue({ name: 'CN=leaf', issuer: anchor });
      await expect(verifyCertificateChain([below.der], [anchor.der]), alg.name).resolves.toBeUndefined();
    }
    const sha1Root = await issue({
      name: 'CN=RSA root',
      ca: true,
      alg: { name: 'RSASSA-PKCS1-v1_5', ...rsa, hash: 'SHA-1' },
    });
    const sha1 = await issue({ name: 'CN=leaf', issuer: sha1Root });
    expect(await chainError(verifyCertificateChain([sha1.der], [sha1Root.der]))).toBe(
      'the leaf certificate is signed with an algorithm that is not accepted (RSA with SHA-1)',
    );
  });

  it('refuses empty inputs with X509ChainError, and unreadable certificates with a plain Error', async () => {
    expect(await chainError(verifyCertificateChain([], [root.der]))).toBe('the chain is empty');
    expect(await chainError(verifyCertificateChain([leaf.der], []))).toBe(
      'there is no trusted root to verify the chain against',
    );
    const err = await verifyCertificateChain([new Uint8Array([1, 2, 3])], [root.der]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(X509ChainError);
    expect((err as Error).message).toBe('certificate 1 of the chain is not a readable X.509 certificate');
  });
});

describe('readPemCertificates (RFC 7468 §5) and readPemPrivateKey', () => {
  let pem: string;
  beforeAll(async () => {
    pem = (await generateVerifierCertificates('vc.example.com')).chain;
  });

  it('refuses text without a certificate', () => {
    expect(() => readPemCertificates('', 'trust.pem')).toThrow(
      'trust.pem: no PEM certificate (-----BEGIN CERTIFICATE-----)',
    );
    expect(() =>
      readPemCertificates('-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n', 'trust.pem'),
    ).toThrow('trust.pem: no PEM certificate');
  });

  it('refuses malformed PEM: no END line, a body that is not base64, base64 that is not a certificate, bytes after the certificate', () => {
    expect(() => readPemCertificates(pem.replace('-----END CERTIFICATE-----', ''), 'trust.pem')).toThrow(
      'trust.pem: malformed PEM: a -----BEGIN CERTIFICATE----- has no matching -----END CERTIFICATE-----',
    );
    expect(() => readPemCertificates(pem + pem.replace(/\n(.)/, '\n*$1'), 'trust.pem')).toThrow(
      'trust.pem: certificate 2 is malformed PEM (not base64)',
    );
    expect(() =>
      readPemCertificates('-----BEGIN CERTIFICATE-----\nAAECAwQF\n-----END CERTIFICATE-----\n', 'trust.pem'),
    ).toThrow('trust.pem: certificate 1 is not a readable X.509 certificate');
    const der = readPemCertificates(pem, 'p')[0];
    expect(() => readPemCertificates(toPem(new Uint8Array([...der, 0, 0])), 'trust.pem')).toThrow(
      'trust.pem: certificate 1 has bytes after the certificate',
    );
  });

  it('reads PKCS#8 and SEC1 P-256 keys', () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    for (const type of ['pkcs8', 'sec1'] as const) {
      const text = privateKey.export({ format: 'pem', type }) as string;
      expect(readPemPrivateKey(text, 'verifier.key').asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
    }
  });

  it('HAIP 1.0 (ES256): refuses an RSA or P-384 key, and text that is no private key', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({
      format: 'pem',
      type: 'pkcs8',
    }) as string;
    const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey.export({
      format: 'pem',
      type: 'pkcs8',
    }) as string;
    expect(() => readPemPrivateKey(rsa, 'verifier.key')).toThrow(
      'verifier.key: must be an EC P-256 private key (ES256), not rsa',
    );
    expect(() => readPemPrivateKey(p384, 'verifier.key')).toThrow(
      'verifier.key: must be an EC P-256 private key (ES256), not ec secp384r1',
    );
    expect(() => readPemPrivateKey(pem, 'verifier.key')).toThrow(
      'verifier.key: not a readable, unencrypted PEM private key',
    );
  });
});
