import { createPrivateKey } from 'node:crypto';
import { digest } from '@sd-jwt/crypto-nodejs';
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc';
import type { JWK } from 'jose';
import { randomBase64url } from '../random.js';
import { signEs256 } from '../keys/es256.js';

export interface SdJwtVcInput {
  issuer: string;
  vct: string;
  attributes: Record<string, unknown>;
  holderJwk: JWK;
  /** epoch seconds */
  expiresAt: number;
  /** epoch seconds, defaults to now */
  issuedAt?: number;
  /** the credential's Token Status List entry (D18) */
  status?: { idx: number; uri: string };
}

/**
 * A disclosure's salt: 128 bits from the CSPRNG, base64url-encoded, as SD-JWT's security considerations
 * recommend (salt entropy: at least 128 bits). @sd-jwt's own generator gives 16 hex characters, 64 bits.
 * The library asks for a length of 16; the salt is 16 bytes whatever it asks.
 */
const disclosureSalt = (): string => randomBase64url(16);

const PUBLIC_MEMBERS = ['kty', 'crv', 'x', 'y', 'n', 'e', 'alg'] as const;

/** Only the public members of the holder's key go into `cnf` (RFC 7800 §3.2). */
export function publicJwk(jwk: JWK): JWK {
  const out: JWK = {};
  for (const member of PUBLIC_MEMBERS) if (jwk[member] !== undefined) out[member] = jwk[member];
  return out;
}

/**
 * Signs SD-JWT VCs (draft-ietf-oauth-sd-jwt-vc §3) with the credential issuer's ES256 key: header
 * `typ: dc+sd-jwt` and the key's `kid`, every attribute selectively disclosable (D10), holder binding by
 * `cnf.jwk`, `exp` = the credential's ExpiresAt.
 */
export class SdJwtVcSigner {
  readonly #kid: string;
  readonly #sdJwt: SDJwtVcInstance;

  constructor(privateJwk: JWK) {
    if (!privateJwk.kid) throw new TypeError('the credential signing key needs a kid');
    if (privateJwk.kty !== 'EC' || privateJwk.crv !== 'P-256' || !privateJwk.d) {
      throw new TypeError('the credential signing key must be a private ES256 (EC P-256) JWK');
    }
    this.#kid = privateJwk.kid;
    const key = createPrivateKey({ key: privateJwk as never, format: 'jwk' });
    const signer = (data: string) => signEs256(key, data);
    this.#sdJwt = new SDJwtVcInstance({ signer, signAlg: 'ES256', hasher: digest, hashAlg: 'sha-256', saltGenerator: disclosureSalt });
  }

  async sign(input: SdJwtVcInput): Promise<string> {
    const payload = {
      ...input.attributes,
      iss: input.issuer,
      vct: input.vct,
      iat: input.issuedAt ?? Math.floor(Date.now() / 1000),
      exp: input.expiresAt,
      cnf: { jwk: publicJwk(input.holderJwk) },
      ...(input.status ? { status: { status_list: input.status } } : {}),
    };
    const disclosureFrame = { _sd: Object.keys(input.attributes) };
    // the frame names only attributes; the library's types cannot express a frame over an open record
    return this.#sdJwt.issue(payload, disclosureFrame as never, { header: { kid: this.#kid } });
  }
}
