/**
 * Checks a JWS's `x5c` header the way a HAIP 1.0 wallet would, with pkijs and @peculiar/x509 only (no code
 * of src/keys): leaf first, no trust anchor in it, the chain validates (RFC 5280) to the given CA, the leaf
 * names `iss` as a subjectAltName URI and its host as dNSName (iPAddress for an IP literal), and the JWS
 * verifies under the leaf's public key.
 */
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import { isIP } from 'node:net';
import * as x509 from '@peculiar/x509';
import * as pkijs from 'pkijs';
import { compactVerify, decodeProtectedHeader, exportJWK, type JWK } from 'jose';

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

const der = (b64: string) => new Uint8Array(Buffer.from(b64, 'base64'));
const pemToDer = (pem: string) => der(pem.replace(/-----[^-]+-----|\s+/g, ''));

export interface CheckedX5c {
  /** the leaf, DER base64 (as in the header) */
  leaf: string;
  /** the leaf's public key */
  leafJwk: JWK;
  header: Record<string, unknown>;
}

/** `uri: false`: the host alone may name the issuer (SD-JWT VC §3.5 allows either), as an operator's leaf may. */
export async function checkX5cIndependently(
  jws: string,
  o: { caPem: string; iss: string; now?: Date; uri?: boolean },
): Promise<CheckedX5c> {
  const header = decodeProtectedHeader(jws) as Record<string, unknown>;
  const x5c = header.x5c;
  if (!Array.isArray(x5c) || x5c.length === 0 || !x5c.every((c) => typeof c === 'string'))
    throw new Error('the JWS has no x5c header');
  const certs = (x5c as string[]).map((c) => new x509.X509Certificate(der(c)));
  // HAIP 1.0: no trust anchor in x5c
  for (const [i, c] of certs.entries())
    if (await c.isSelfSigned()) throw new Error(`x5c[${i}] is self-signed (a root)`);
  const leaf = certs[0];
  const bc = leaf.getExtension(x509.BasicConstraintsExtension);
  if (bc?.ca) throw new Error('the first x5c certificate is a CA, not the leaf');

  // RFC 5280 path validation by pkijs, to the CA as the only trust anchor
  const engine = new pkijs.CertificateChainValidationEngine({
    trustedCerts: [pkijs.Certificate.fromBER(pemToDer(o.caPem))],
    certs: (x5c as string[]).map((c) => pkijs.Certificate.fromBER(der(c))),
    checkDate: o.now ?? new Date(),
  });
  const result = await engine.verify();
  if (!result.result) throw new Error(`the x5c chain does not validate to the CA: ${result.resultMessage}`);

  const san = leaf.getExtension(x509.SubjectAlternativeNameExtension);
  const names = san?.names.items ?? [];
  if (o.uri !== false && !names.some((n) => n.type === 'url' && n.value === o.iss))
    throw new Error(`the leaf does not name ${o.iss} as a subjectAltName URI`);
  const host = new URL(o.iss).hostname;
  const hostType = isIP(host) ? 'ip' : 'dns';
  if (!names.some((n) => n.type === hostType && n.value === host))
    throw new Error(
      `the leaf does not name ${host} as a subjectAltName ${hostType === 'ip' ? 'iPAddress' : 'dNSName'}`,
    );

  const publicKey = await leaf.publicKey.export({ name: 'ECDSA', namedCurve: 'P-256' }, ['verify']);
  await compactVerify(jws, publicKey, { algorithms: ['ES256'] });
  const { kty, crv, x, y } = await exportJWK(publicKey);
  return { leaf: (x5c as string[])[0], leafJwk: { kty, crv, x, y }, header };
}
