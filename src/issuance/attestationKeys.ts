import { createPublicKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { createLocalJWKSet, type JSONWebKeySet, type JWTHeaderParameters } from 'jose';
import type { Config } from '../config/schema.js';
import { certificatePublicJwk, readPemCertificates, verifyCertificateChain } from '../keys/x509.js';

type Provider = Config['walletAttestation']['trustedProviders'][number];
type PublicKey = CryptoKey | KeyObject;
/** A JWS header as oidc-provider hands it over. */
type Header = Record<string, unknown>;

/** One wallet provider as it checks its attestations: by its JWKS, or by an x5c chain to its roots. */
interface TrustedProvider {
  name: string;
  keyFor(header: Header): Promise<PublicKey>;
}

export class UntrustedAttestation extends Error {}

const X5C_MAX = 10;

/**
 * The keys wallet and key attestations (OAuth 2.0 Attestation-Based Client Authentication; OpenID4VCI 1.0
 * Appendix D) are signed with: a key of a trusted wallet provider's JWKS (named by `kid`), or the leaf of
 * the attestation's `x5c` when the chain ends at one of a provider's roots. oidc-provider verifies the
 * attestation itself (typ, exp, signature, cnf or attested_keys) with the key this returns.
 */
export class AttestationKeys {
  readonly #providers: TrustedProvider[];

  constructor(providers: TrustedProvider[]) {
    this.#providers = providers;
  }

  static fromConfig(providers: Provider[], baseDir: string): AttestationKeys {
    return new AttestationKeys(
      providers.map((p, i) => {
        const where = `walletAttestation.trustedProviders[${i}]`;
        if (p.jwks) return jwksProvider(p.name, p.jwks as JSONWebKeySet, where);
        const file = resolve(baseDir, p.certificates!);
        let pem: string;
        try {
          pem = readFileSync(file, 'utf8');
        } catch {
          throw new Error(`${where}.certificates: ${file} cannot be read`);
        }
        return x5cProvider(p.name, readPemCertificates(pem, `${where}.certificates (${file})`));
      }),
    );
  }

  get configured(): boolean {
    return this.#providers.length > 0;
  }

  /** The key of the first provider that vouches for this header; UntrustedAttestation when none does. */
  async keyFor(header: Header): Promise<PublicKey> {
    for (const provider of this.#providers) {
      try {
        return await provider.keyFor(header);
      } catch {
        // the next provider
      }
    }
    throw new UntrustedAttestation('the attestation is not signed by a trusted wallet provider');
  }
}

function jwksProvider(name: string, jwks: JSONWebKeySet, where: string): TrustedProvider {
  let set: ReturnType<typeof createLocalJWKSet>;
  try {
    set = createLocalJWKSet(jwks);
  } catch {
    throw new Error(`${where}.jwks is not a JWK set`);
  }
  return {
    name,
    // by kid only: a set would hand its single key to any header without one, x5c-signed ones included
    keyFor: async (header) => {
      if (typeof header.kid !== 'string' || header.x5c !== undefined)
        throw new UntrustedAttestation('not a JWKS-signed attestation');
      return (await set(header as unknown as JWTHeaderParameters)) as PublicKey;
    },
  };
}

function x5cProvider(name: string, roots: Uint8Array[]): TrustedProvider {
  return {
    name,
    async keyFor(header) {
      const x5c = header.x5c;
      if (!Array.isArray(x5c) || x5c.length === 0 || x5c.length > X5C_MAX || !x5c.every((c) => typeof c === 'string')) {
        throw new UntrustedAttestation('the attestation has no x5c chain');
      }
      const chain = x5c.map((c) => new Uint8Array(Buffer.from(c, 'base64')));
      await verifyCertificateChain(chain, roots);
      return createPublicKey({ key: (await certificatePublicJwk(chain[0])) as never, format: 'jwk' });
    },
  };
}
