import 'reflect-metadata';
import { createPrivateKey } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, createServer } from 'node:tls';
import * as x509 from '@peculiar/x509';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import type { JWK } from 'jose';
import { describe, expect, it } from 'vitest';
import { certifyCredentialKey, generateIssuerCa, type IssuerCa } from '../../../src/keys/issuerCertificate.js';
import { validateCertificatePath } from '../../../src/keys/certPath.js';
import { ISSUER_CA_STORE_KEY, localCa } from '../../../src/keys/localCa.js';
import { MemoryStore } from '../../../src/store/memory.js';
import { permitsHost } from '../../../src/keys/nameConstraints.js';
import { readPemCertificates, toPem } from '../../../src/keys/x509.js';
import type { KeyOrigin } from '../../../src/keys/keys.js';
import { keyPair } from '../../helpers/keys.js';

/**
 * RFC 5280 §4.2.1.10: the local issuer CA (developers install it on phones) is held to the base URL's host by
 * critical name constraints, so that its key, should it leak, vouches for no other name. Our chain checker
 * (pkijs, src/keys/certPath.ts) takes the CA's leaves for the host and refuses others; so does OpenSSL, the
 * validator behind Node's TLS, which also honours the CA/Browser Forum's zero-length excluded dNSName.
 */
const der = (x5c: string[]) => x5c.map((c) => new Uint8Array(Buffer.from(c, 'base64')));
const caDer = (ca: IssuerCa) => readPemCertificates(ca.certificate, 'the CA')[0];

/** A leaf of the CA for `iss` (its URI, and its host as dNSName or iPAddress), with its private key. */
async function leafFor(ca: IssuerCa, iss: string): Promise<{ x5c: string[]; jwk: JWK }> {
  const { privateJwk } = await keyPair('leaf');
  return { x5c: await certifyCredentialKey(ca, privateJwk, [iss]), jwk: privateJwk };
}

/** The CA's name constraints as pkijs reads them, each subtree as `<tag>:<value>`. */
function constraintsOf(ca: IssuerCa) {
  const ext = new x509.X509Certificate(ca.certificate).getExtension('2.5.29.30')!;
  const nc = new pkijs.NameConstraints({ schema: asn1js.fromBER(ext.value).result });
  const show = (s: pkijs.GeneralSubtree) =>
    s.base.type === 7
      ? `ip:${Buffer.from((s.base.value as asn1js.OctetString).valueBlock.valueHexView).toString('hex')}`
      : `${s.base.type}:${String(s.base.value)}`;
  return {
    critical: ext.critical,
    permitted: (nc.permittedSubtrees ?? []).map(show),
    excluded: (nc.excludedSubtrees ?? []).map(show),
  };
}

/** A TLS handshake to a server with `leaf`, by a client that trusts only the CA: OpenSSL's chain validation. */
async function handshake(ca: IssuerCa, leaf: { x5c: string[]; jwk: JWK }): Promise<string> {
  const key = createPrivateKey({ key: leaf.jwk as never, format: 'jwk' }).export({ type: 'pkcs8', format: 'pem' });
  const server = createServer({ key, cert: toPem(der(leaf.x5c)[0]) }, (socket) => socket.end());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    return await new Promise<string>((resolve) => {
      const socket = connect({
        host: '127.0.0.1',
        port: (server.address() as AddressInfo).port,
        ca: ca.certificate,
        // the chain alone is under test here, not whether the name is the one dialled
        checkServerIdentity: () => undefined,
      });
      socket.once('secureConnect', () => {
        socket.destroy();
        resolve('ok');
      });
      socket.once('error', (err: NodeJS.ErrnoException) => resolve(`${err.code}: ${err.message}`));
    });
  } finally {
    server.close();
  }
}

describe('the local issuer CA of a DNS host', () => {
  it('permits the host (dNSName, URI) and excludes every IP address, critically', async () => {
    const ca = await generateIssuerCa('vc.example.net');
    expect(constraintsOf(ca)).toEqual({
      critical: true,
      permitted: ['2:vc.example.net', '6:vc.example.net'],
      excluded: ['ip:0000000000000000', `ip:${'00'.repeat(32)}`],
    });
    expect(permitsHost(ca.certificate, 'vc.example.net')).toBe(true);
    expect(permitsHost(ca.certificate, 'evil.example')).toBe(false);
  });

  it("a leaf for the host verifies with our chain checker; one for another host is refused, by it and by OpenSSL's TLS", async () => {
    const ca = await generateIssuerCa('vc.example.net');
    const own = await leafFor(ca, 'https://vc.example.net/wallet');
    await expect(validateCertificatePath(der(own.x5c), [caDer(ca)], new Date())).resolves.toBeUndefined();
    expect(await handshake(ca, own)).toBe('ok');

    const other = await leafFor(ca, 'https://evil.example/wallet');
    await expect(validateCertificatePath(der(other.x5c), [caDer(ca)], new Date())).rejects.toThrow(/name constraint/i);
    expect(await handshake(ca, other)).toMatch(/permitted subtree violation$/);
    const ip = await leafFor(ca, 'https://10.0.0.1/wallet');
    await expect(validateCertificatePath(der(ip.x5c), [caDer(ca)], new Date())).rejects.toThrow(/name constraint/i);
    expect(await handshake(ca, ip)).toMatch(/subtree violation$/);
  });
});

describe('the local issuer CA of an IP host', () => {
  it.each([
    ['127.0.0.1', `7f000001${'ff'.repeat(4)}`],
    ['::1', `${'00'.repeat(15)}01${'ff'.repeat(16)}`],
  ])('%s: permits that address alone and excludes every DNS name (a zero-length dNSName)', async (host, subtree) => {
    const ca = await generateIssuerCa(host);
    expect(constraintsOf(ca)).toEqual({ critical: true, permitted: [`ip:${subtree}`], excluded: ['2:'] });
    expect(permitsHost(ca.certificate, host)).toBe(true);
    expect(permitsHost(ca.certificate, '10.0.0.1')).toBe(false);
    expect(permitsHost(ca.certificate, 'localhost')).toBe(false);
  });

  it("a leaf for the address verifies; one for another address or any DNS name is refused (OpenSSL's TLS, and our checker for addresses)", async () => {
    const ca = await generateIssuerCa('127.0.0.1');
    const own = await leafFor(ca, 'http://127.0.0.1:3000/wallet');
    await expect(validateCertificatePath(der(own.x5c), [caDer(ca)], new Date())).resolves.toBeUndefined();
    expect(await handshake(ca, own)).toBe('ok');

    const otherAddress = await leafFor(ca, 'http://10.0.0.1:3000/wallet');
    await expect(validateCertificatePath(der(otherAddress.x5c), [caDer(ca)], new Date())).rejects.toThrow(
      /name constraint/i,
    );
    expect(await handshake(ca, otherAddress)).toMatch(/permitted subtree violation$/);
    // pkijs does not read a zero-length dNSName as "every name"; OpenSSL, like Go and the Baseline Requirements, does
    expect(await handshake(ca, await leafFor(ca, 'https://evil.example/wallet'))).toMatch(
      /excluded subtree violation$/,
    );
  });
});

describe('a local issuer CA kept from an earlier start (src/keys/localCa.ts)', () => {
  const credential = (dir: string): KeyOrigin => ({ set: 'credential', origin: 'file', file: join(dir, 'c.json') });

  it('made for the host: used as it is', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vc-localca-'));
    const first = await localCa(credential(dir), join(dir, 'issuer-chain.pem'), 'vc.example.net');
    const again = await localCa(credential(dir), join(dir, 'issuer-chain.pem'), 'vc.example.net');
    expect(first.generated).toBe(true);
    expect(again).toMatchObject({ generated: false, ca: first.ca });
    expect(again.warning).toBeUndefined();
    expect(readFileSync(join(dir, 'issuer-ca.pem'), 'utf8')).toBe(first.ca.certificate);
  });

  it('made for another host (the base URL moved): replaced by one for this host, with a warning', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vc-localca-'));
    const before = await localCa(credential(dir), join(dir, 'issuer-chain.pem'), 'localhost');
    const moved = await localCa(credential(dir), join(dir, 'issuer-chain.pem'), '192.0.2.10');
    expect(moved.generated).toBe(true);
    expect(moved.ca.key).not.toBe(before.ca.key);
    expect(permitsHost(moved.ca.certificate, '192.0.2.10')).toBe(true);
    expect(permitsHost(moved.ca.certificate, 'localhost')).toBe(false);
    expect(moved.warning).toMatch(
      /held to another host; a new one for 192\.0\.2\.10 replaced it: have wallets trust the new .*issuer-ca\.pem$/,
    );
    expect(readFileSync(join(dir, 'issuer-ca.pem'), 'utf8')).toBe(moved.ca.certificate);
    expect(await localCa(credential(dir), join(dir, 'issuer-chain.pem'), '192.0.2.10')).toMatchObject({
      generated: false,
      ca: moved.ca,
    });
  });

  it('in the store: replaced once, compare-and-set, when instances start together on the new host', async () => {
    const store = new MemoryStore();
    const inStore: KeyOrigin = {
      set: 'credential',
      origin: 'store',
      file: 'credential.json',
      storeKey: 'keys:credential',
    };
    const chain = join(mkdtempSync(join(tmpdir(), 'vc-localca-')), 'issuer-chain.pem');
    const before = await localCa(inStore, chain, 'localhost', store);
    const [a, b] = await Promise.all([
      localCa(inStore, chain, 'vc.example.net', store),
      localCa(inStore, chain, 'vc.example.net', store),
    ]);
    expect(a.ca).toEqual(b.ca);
    expect(a.ca.key).not.toBe(before.ca.key);
    expect(permitsHost(a.ca.certificate, 'vc.example.net')).toBe(true);
    expect(await store.get(ISSUER_CA_STORE_KEY)).toEqual(a.ca);
    await store.close();
  });

  it('made before it had name constraints: kept, with a warning saying how to have a constrained one made', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vc-localca-'));
    const made = await localCa(credential(dir), join(dir, 'issuer-chain.pem'), 'localhost');
    // the same CA key, its certificate without the extension (as an earlier release wrote it)
    const cert = new x509.X509Certificate(made.ca.certificate);
    const keys = {
      privateKey: await crypto.subtle.importKey(
        'pkcs8',
        Buffer.from(made.ca.key.replace(/-----[^-]+-----|\s+/g, ''), 'base64'),
        { name: 'ECDSA', namedCurve: 'P-256' },
        true,
        ['sign'],
      ),
      publicKey: await cert.publicKey.export(),
    };
    const unconstrained = await x509.X509CertificateGenerator.createSelfSigned({
      name: cert.subject,
      notBefore: cert.notBefore,
      notAfter: cert.notAfter,
      keys,
      signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
      extensions: cert.extensions.filter((e) => e.type !== '2.5.29.30'),
    });
    writeFileSync(join(dir, 'issuer-ca-key.pem'), `${made.ca.key}${unconstrained.toString('pem')}\n`);
    const kept = await localCa(credential(dir), join(dir, 'issuer-chain.pem'), 'localhost');
    expect(kept.generated).toBe(false);
    expect(kept.warning).toMatch(/has no name constraints .* a wallet that trusts it would trust it for any name/);
  });
});
