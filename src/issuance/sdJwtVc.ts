import { createPrivateKey } from 'node:crypto';
import { digest } from '@sd-jwt/crypto-nodejs';
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc';
import type { JWK } from 'jose';
import { randomBase64url } from '../random.js';
import { signEs256 } from '../keys/es256.js';
import { signingKeysOf, type SigningKeys } from '../keys/keyRing.js';

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
 * `typ: dc+sd-jwt`, the key's `kid` and its certificate chain `x5c` (src/keys/issuerCertificate.ts), every attribute selectively disclosable (D10), holder binding by
 * `cnf.jwk`, `exp` = the credential's ExpiresAt.
 */
export class SdJwtVcSigner {
  readonly #keys: SigningKeys;
  /** the signing key's kid and its instance: a rotation (D20) makes a new one */
  #current?: { jwk: JWK; sdJwt: SDJwtVcInstance };

  readonly #integrityOf: (vct: string) => string | undefined;

  /**
   * `keys`: a private ES256 JWK, or rotating keys (src/keys/keyRing.ts) of which the active one signs.
   * `integrityOf`: the `vct#integrity` of a vct whose Type Metadata this service serves (src/issuance/typeMetadata.ts).
   */
  constructor(keys: JWK | SigningKeys, opts: { integrityOf?: (vct: string) => string | undefined } = {}) {
    this.#keys = 'signing' in keys ? keys : signingKeysOf({ keys: [keys] });
    this.#integrityOf = opts.integrityOf ?? (() => undefined);
    this.#instance();
  }

  #instance(): { jwk: JWK; sdJwt: SDJwtVcInstance } {
    const jwk = this.#keys.signing();
    if (this.#current?.jwk === jwk) return this.#current;
    if (!jwk.kid) throw new TypeError('the credential signing key needs a kid');
    if (jwk.kty !== 'EC' || jwk.crv !== 'P-256' || !jwk.d) {
      throw new TypeError('the credential signing key must be a private ES256 (EC P-256) JWK');
    }
    const key = createPrivateKey({ key: jwk as never, format: 'jwk' });
    const signer = (data: string) => signEs256(key, data);
    this.#current = {
      jwk,
      sdJwt: new SDJwtVcInstance({
        signer,
        signAlg: 'ES256',
        hasher: digest,
        hashAlg: 'sha-256',
        saltGenerator: disclosureSalt,
      }),
    };
    return this.#current;
  }

  async sign(input: SdJwtVcInput): Promise<string> {
    const integrity = this.#integrityOf(input.vct);
    const payload = {
      ...input.attributes,
      iss: input.issuer,
      vct: input.vct,
      // SD-JWT VC "Document Integrity": a wallet checks the Type Metadata it fetches from the vct against it
      ...(integrity ? { 'vct#integrity': integrity } : {}),
      iat: input.issuedAt ?? Math.floor(Date.now() / 1000),
      exp: input.expiresAt,
      cnf: { jwk: publicJwk(input.holderJwk) },
      ...(input.status ? { status: { status_list: input.status } } : {}),
    };
    const disclosureFrame = { _sd: Object.keys(input.attributes) };
    // the frame names only attributes; the library's types cannot express a frame over an open record
    const { jwk, sdJwt } = this.#instance();
    // HAIP 1.0 §6.1.1: the issuer's certificate chain when the key has one; `kid` stays for wallets and
    // verifiers that resolve the key through the JWT VC issuer metadata
    return sdJwt.issue(payload, disclosureFrame as never, {
      header: { kid: jwk.kid, ...(jwk.x5c ? { x5c: jwk.x5c } : {}) },
    });
  }
}
