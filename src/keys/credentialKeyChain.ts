import { createPublicKey, X509Certificate, type KeyObject } from 'node:crypto';
import { leafNamesIssuer } from './issuerCertificate.js';
import type { KeptJwk } from './keys.js';
import { checkVerifierChain, dnsNames, uriNames } from './x509.js';

/**
 * A credential key JWK that carries its own `x5c` (RFC 7517 §4.7), with neither the operator's
 * `issuer.*` files nor a local issuer CA to certify it: that chain goes as it is into the `x5c` header of
 * every SD-JWT VC and Status List Token the key signs, so it is checked here as the operator's
 * `issuer.certificateChain` is (src/keys/issuerCertificate.ts): the first certificate's key is the JWK's
 * key; the leaf is valid now, P-256 and not a CA; the chain is in order, without a self-signed
 * certificate, a valid path as far as it goes (src/keys/certPath.ts); and the leaf names every issuer
 * identifier we sign as (SD-JWT VC §3.5). `where` names the key set's file or store key; each error names
 * it and the key's `kid`. Keys without `x5c` are left alone (they sign with a `kid` only).
 */
export async function checkCredentialKeyChains(
  set: { keys: KeptJwk[] },
  where: string,
  issuers: string[],
): Promise<void> {
  for (const jwk of set.keys) {
    if (jwk.x5c === undefined) continue;
    const key = `${where}: the credential key ${JSON.stringify(jwk.kid ?? '(no kid)')}`;
    const x5c: unknown = jwk.x5c;
    if (
      !Array.isArray(x5c) ||
      x5c.length === 0 ||
      !x5c.every((c) => typeof c === 'string' && /^[A-Za-z0-9+/]+={0,2}$/.test(c))
    ) {
      throw new Error(`${key} has an x5c that is not an array of base64 DER certificates (RFC 7517 §4.7)`);
    }
    const chain = (x5c as string[]).map((c) => new Uint8Array(Buffer.from(c, 'base64')));
    let leaf: X509Certificate;
    let publicKey: KeyObject;
    try {
      leaf = new X509Certificate(chain[0]);
      publicKey = createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y } as never, format: 'jwk' });
    } catch {
      throw new Error(`${key}: its x5c's first certificate, or the key itself, cannot be read`);
    }
    const spki = (k: KeyObject) => k.export({ format: 'der', type: 'spki' });
    if (!spki(leaf.publicKey).equals(spki(publicKey))) {
      throw new Error(
        `${key}: the first certificate of its x5c certifies another key (RFC 7517 §4.7: it must be the JWK's own key); give the key's own leaf first, or leave x5c out`,
      );
    }
    if (leaf.ca) throw new Error(`${key}: the first certificate of its x5c is a CA certificate, not the key's own`);
    // order, validity, P-256 and no self-signed certificate: the checks the operator's issuer chain gets
    await checkVerifierChain(chain, publicKey, `${key}, its x5c`);
    for (const iss of issuers) {
      if (!leafNamesIssuer(chain[0], iss)) {
        const names = [...uriNames(chain[0]).map((u) => `URI ${u}`), ...dnsNames(chain[0]).map((d) => `DNS ${d}`)];
        throw new Error(
          `${key}: the leaf of its x5c must name the credential issuer ${iss} as a subjectAltName URI, or its host as a dNSName (SD-JWT VC §3.5); it names ${names.length ? names.join(', ') : 'neither'}`,
        );
      }
    }
  }
}
