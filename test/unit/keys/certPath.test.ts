import { beforeAll, describe, expect, it } from 'vitest';
import { validateCertificatePath, X509ChainError } from '../../../src/keys/certPath.js';
import { checkLeafPurpose, checkTrustAnchors, verifyCertificateChain } from '../../../src/keys/x509.js';
import { makeCert, unknownCriticalExtension, type TestCert } from '../../helpers/pki.js';

/** The path validator (RFC 5280 §6.1 by pkijs, and the rules it leaves open), issue 31 §3. */

async function refusal(promise: Promise<unknown>): Promise<string> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(X509ChainError);
  return (err as Error).message;
}

let root: TestCert;
let constrained: TestCert;

beforeAll(async () => {
  root = await makeCert({ subject: 'CN=Test Root, C=NL', ca: true });
  constrained = await makeCert({
    subject: 'CN=Allowed Only CA, C=NL',
    ca: true,
    issuer: root,
    permitted: { dns: ['allowed.test'], uri: ['.allowed.test'] },
  });
});

describe('name constraints (RFC 5280 §4.2.1.10), issue 31 §3', () => {
  it('refuses a leaf for https://victim.test under an intermediate that permits only allowed.test', async () => {
    const victim = await makeCert({
      subject: 'CN=victim',
      issuer: constrained,
      san: [
        { type: 'url', value: 'https://victim.test' },
        { type: 'dns', value: 'victim.test' },
      ],
    });
    expect(await refusal(validateCertificatePath([victim.der, constrained.der], [root.der], new Date()))).toBe(
      'a certificate of the chain is outside the name constraints of a CA above it (RFC 5280 §4.2.1.10)',
    );
    // the URI alone is enough to be refused
    const uriOnly = await makeCert({
      subject: 'CN=victim',
      issuer: constrained,
      san: [{ type: 'url', value: 'https://victim.test' }],
    });
    await expect(validateCertificatePath([uriOnly.der, constrained.der], [root.der], new Date())).rejects.toThrow(
      /name constraints/,
    );
  });

  it('accepts a leaf inside the permitted subtrees', async () => {
    const allowed = await makeCert({
      subject: 'CN=allowed',
      issuer: constrained,
      san: [
        { type: 'url', value: 'https://issuer.allowed.test/x' },
        { type: 'dns', value: 'allowed.test' },
      ],
    });
    await expect(
      validateCertificatePath([allowed.der, constrained.der], [root.der], new Date()),
    ).resolves.toBeUndefined();
  });

  it("applies the trust anchor's own name constraints to the whole path", async () => {
    const constrainedRoot = await makeCert({
      subject: 'CN=Constrained Root',
      ca: true,
      permitted: { dns: ['allowed.test'] },
    });
    const victim = await makeCert({
      subject: 'CN=victim',
      issuer: constrainedRoot,
      san: [{ type: 'dns', value: 'victim.test' }],
    });
    const allowed = await makeCert({
      subject: 'CN=allowed',
      issuer: constrainedRoot,
      san: [{ type: 'dns', value: 'allowed.test' }],
    });
    await expect(validateCertificatePath([victim.der], [constrainedRoot.der], new Date())).rejects.toThrow(
      /name constraints/,
    );
    await expect(validateCertificatePath([allowed.der], [constrainedRoot.der], new Date())).resolves.toBeUndefined();
  });

  it('refuses nested permitted subtrees (pkijs would take their union, RFC 5280 wants the intersection)', async () => {
    const other = await makeCert({
      subject: 'CN=Other Only CA',
      ca: true,
      issuer: constrained,
      permitted: { dns: ['other.test'] },
    });
    const leaf = await makeCert({ subject: 'CN=other', issuer: other, san: [{ type: 'dns', value: 'other.test' }] });
    expect(
      await refusal(validateCertificatePath([leaf.der, other.der, constrained.der], [root.der], new Date())),
    ).toMatch(/more than one certificate of the chain permits name subtrees/);
  });
});

describe('critical extensions (RFC 5280 §6.1.4 (o), §6.1.5 (f)), issue 31 §3', () => {
  it('refuses a leaf with an unknown critical extension', async () => {
    const leaf = await makeCert({ subject: 'CN=leaf', issuer: root, extensions: [unknownCriticalExtension()] });
    expect(await refusal(validateCertificatePath([leaf.der], [root.der], new Date()))).toBe(
      'the leaf certificate has a critical extension this service does not process (1.3.6.1.4.1.55555.1.1; RFC 5280 §4.2)',
    );
  });

  it('refuses an intermediate with an unknown critical extension', async () => {
    const intermediate = await makeCert({
      subject: 'CN=Odd CA',
      ca: true,
      issuer: root,
      extensions: [unknownCriticalExtension()],
    });
    const leaf = await makeCert({ subject: 'CN=leaf', issuer: intermediate });
    expect(await refusal(validateCertificatePath([leaf.der, intermediate.der], [root.der], new Date()))).toMatch(
      /^intermediate certificate 1 has a critical extension this service does not process/,
    );
  });

  it('accepts the same extension when it is not critical', async () => {
    const { Extension } = await import('@peculiar/x509');
    const leaf = await makeCert({
      subject: 'CN=leaf',
      issuer: root,
      extensions: [new Extension('1.3.6.1.4.1.55555.1.1', false, new Uint8Array([0x05, 0x00]))],
    });
    await expect(validateCertificatePath([leaf.der], [root.der], new Date())).resolves.toBeUndefined();
  });

  it('refuses at start-up a trust anchor with an unknown critical extension, or one that is no CA', async () => {
    const odd = await makeCert({ subject: 'CN=Odd Root', ca: true, extensions: [unknownCriticalExtension()] });
    expect(() => checkTrustAnchors([odd.der], 'anchors')).toThrow(
      /^anchors: certificate 1 has a critical extension this service does not process/,
    );
    const leaf = await makeCert({ subject: 'CN=leaf', issuer: root });
    expect(() => checkTrustAnchors([root.der, leaf.der], 'anchors')).toThrow(
      'anchors: certificate 2 is not a CA certificate (basicConstraints cA is not true): a trust anchor issues the certificates it vouches for',
    );
    expect(checkTrustAnchors([root.der], 'anchors')).toEqual([]);
  });
});

describe('the path is the chain, and other rules', () => {
  it('accepts a valid chain with and without the anchor at its end', async () => {
    const intermediate = await makeCert({ subject: 'CN=Plain CA', ca: true, issuer: root });
    const leaf = await makeCert({ subject: 'CN=leaf', issuer: intermediate });
    await expect(
      validateCertificatePath([leaf.der, intermediate.der], [root.der], new Date()),
    ).resolves.toBeUndefined();
    await expect(
      validateCertificatePath([leaf.der, intermediate.der, root.der], [root.der], new Date()),
    ).resolves.toBeUndefined();
  });

  it('refuses a chain carrying a certificate that is not on the path', async () => {
    const intermediate = await makeCert({ subject: 'CN=Plain CA', ca: true, issuer: root });
    const stray = await makeCert({ subject: 'CN=Stray CA', ca: true, issuer: root });
    const leaf = await makeCert({ subject: 'CN=leaf', issuer: root });
    expect(
      await refusal(validateCertificatePath([leaf.der, intermediate.der, stray.der], [root.der], new Date())),
    ).toMatch(/^the chain is not in order/);
  });
});

describe('key usages of the leaf for its purpose', () => {
  it('ISO/IEC 18013-5 Annex B.1.4: a document signer needs the mdlDS extended key usage and digitalSignature', async () => {
    const ds = await makeCert({ subject: 'CN=DS', issuer: root, eku: ['1.0.18013.5.1.2'] });
    expect(() => checkLeafPurpose(ds.der, 'mdoc-document-signer')).not.toThrow();
    const noEku = await makeCert({ subject: 'CN=DS', issuer: root });
    expect(() => checkLeafPurpose(noEku.der, 'mdoc-document-signer')).toThrow(
      'the document signer certificate lacks the mdlDS extended key usage (1.0.18013.5.1.2, ISO/IEC 18013-5 Annex B.1.4)',
    );
    const reader = await makeCert({ subject: 'CN=Reader', issuer: root, eku: ['1.0.18013.5.1.6'] });
    expect(() => checkLeafPurpose(reader.der, 'mdoc-document-signer')).toThrow(/mdlDS/);
    const noKu = await makeCert({ subject: 'CN=DS', issuer: root, eku: ['1.0.18013.5.1.2'], keyUsage: null });
    expect(() => checkLeafPurpose(noKu.der, 'mdoc-document-signer')).toThrow(/keyUsage digitalSignature/);
  });

  it('RFC 5280 §4.2.1.3: an SD-JWT VC issuer certificate with a keyUsage needs digitalSignature; without one it passes; a document signer is refused', async () => {
    const { KeyUsageFlags } = await import('@peculiar/x509');
    const encipher = await makeCert({ subject: 'CN=Issuer', issuer: root, keyUsage: KeyUsageFlags.keyEncipherment });
    expect(() => checkLeafPurpose(encipher.der, 'sd-jwt-vc-issuer')).toThrow(
      "the issuer certificate's keyUsage lacks digitalSignature (RFC 5280 §4.2.1.3)",
    );
    const none = await makeCert({ subject: 'CN=Issuer', issuer: root, keyUsage: null });
    expect(() => checkLeafPurpose(none.der, 'sd-jwt-vc-issuer')).not.toThrow();
    const ds = await makeCert({ subject: 'CN=DS', issuer: root, eku: ['1.0.18013.5.1.2'] });
    expect(() => checkLeafPurpose(ds.der, 'sd-jwt-vc-issuer')).toThrow(
      /limits it to ISO\/IEC 18013-5 \(mdoc\) purposes/,
    );
    await expect(verifyCertificateChain([ds.der], [root.der], new Date(), 'sd-jwt-vc-issuer')).rejects.toThrow(
      X509ChainError,
    );
  });
});
