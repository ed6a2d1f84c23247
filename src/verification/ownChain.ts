import { importJWK, type JWTVerifyGetKey } from 'jose';
import { certificatePublicJwk, uriNames, verifyCertificateChain, X509ChainError } from '../keys/x509.js';

/** Our credential's x5c does not chain to our issuer CA, or its leaf does not certify our issuer. */
export class OwnChainRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OwnChainRefused';
  }
}

/**
 * Our own credentials (HAIP 1.0 §6.1.1, SD-JWT VC §3.5): one that carries `x5c` is verified by that chain,
 * which must end at the issuer CA we made (no other anchor: only our CA vouches for our issuer), its leaf
 * an SD-JWT VC issuer certificate valid now that names `iss` as a subjectAltName URI. The signature is then
 * verified with the leaf's key, so a leaf whose key is not the one that signed fails as a bad signature.
 * A rotated key's credentials keep verifying while their leaf is valid, published or not. A credential
 * without `x5c` (signed before certificates, or under operator keys without one) is verified by `kid`.
 * A refused chain is a refused signature (`issuer_signature_invalid`), named in the error's message.
 */
export function byChainOrKid(issuer: string, issuerCa: Uint8Array, byKid: JWTVerifyGetKey): JWTVerifyGetKey {
  return async (header, token) => {
    const x5c = (header as { x5c?: unknown }).x5c;
    if (x5c === undefined) return byKid(header, token);
    if (
      !Array.isArray(x5c) ||
      x5c.length === 0 ||
      x5c.length > 10 ||
      !x5c.every((c) => typeof c === 'string' && /^[A-Za-z0-9+/]+={0,2}$/.test(c))
    ) {
      throw new OwnChainRefused('the credential x5c header is not an array of base64 certificates');
    }
    const chain = x5c.map((c: string) => new Uint8Array(Buffer.from(c, 'base64')));
    try {
      await verifyCertificateChain(chain, [issuerCa], new Date(), 'sd-jwt-vc-issuer');
    } catch (err) {
      throw new OwnChainRefused(
        err instanceof X509ChainError
          ? `the credential's x5c chain does not end at our issuer CA: ${err.message}`
          : 'the credential x5c header does not hold readable certificates',
      );
    }
    if (!uriNames(chain[0]).includes(issuer))
      throw new OwnChainRefused("the x5c leaf certificate does not name the credential's iss (subjectAltName URI)");
    return importJWK(await certificatePublicJwk(chain[0]), header.alg);
  };
}
