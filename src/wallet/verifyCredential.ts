// @peculiar/x509 resolves its parsers through tsyringe, which needs the Reflect metadata API
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { decodeJws } from './jws.js';
import { digest } from '@sd-jwt/crypto-nodejs';
import { SDJwtInstance } from '@sd-jwt/core';
import { calculateJwkThumbprint, compactVerify, importJWK, type JWK } from 'jose';
import {
  certificatePublicKey,
  CertificateError,
  checkChain,
  leafNamesIssuer,
  parseCertificate,
  readX5c,
} from './certificates.js';
import { jsonOrOAuthError, WalletError } from './errors.js';
import { wellKnownUrl } from './metadata.js';

/** Claims the SD-JWT VC itself carries, as opposed to the holder's attributes. */
export const REGISTERED_CLAIMS = new Set([
  'iss',
  'sub',
  'aud',
  'iat',
  'nbf',
  'exp',
  'jti',
  'cnf',
  'vct',
  'vct#integrity',
  'status',
  '_sd_alg',
]);

export interface VerifiedCredential {
  issuer: string;
  vct: string;
  /** epoch seconds, when the credential has one */
  expiresAt?: number;
  /** the disclosed attributes */
  claims: Record<string, unknown>;
}

/** SD-JWT VC §5: the issuer's keys from `/.well-known/jwt-vc-issuer/<path>` (inline `jwks` or `jwks_uri`). */
export async function fetchIssuerKeys(issuer: string, fetchImpl: typeof fetch): Promise<JWK[]> {
  const metadata = await jsonOrOAuthError(
    await fetchImpl(wellKnownUrl(issuer, 'jwt-vc-issuer')),
    'fetching the SD-JWT VC issuer metadata',
  );
  if (metadata.issuer !== issuer)
    throw new WalletError(`SD-JWT VC issuer metadata names ${String(metadata.issuer)}, not ${issuer}`);
  let jwks = metadata.jwks as { keys?: unknown } | undefined;
  if (!jwks && typeof metadata.jwks_uri === 'string')
    jwks = await jsonOrOAuthError(await fetchImpl(metadata.jwks_uri), 'fetching the issuer JWKS');
  if (!jwks || !Array.isArray(jwks.keys)) throw new WalletError('SD-JWT VC issuer metadata has no keys');
  return jwks.keys as JWK[];
}

/**
 * The key of a credential's `x5c` (SD-JWT VC §3.5, leaf first, no root), after checking the chain on its
 * own: readable, in order with each certificate signed by the next, every certificate valid now, the leaf
 * no CA, allowed to sign (keyUsage digitalSignature when present) and naming `iss` (a subjectAltName URI
 * equal to it, or its host as dNSName / iPAddress). With `trust` the chain must end at one of those CAs.
 *
 * Without trust for issuers the wallet cannot anchor the chain, and a chain anyone can make vouches for
 * nothing by itself: it is still checked for consistency (a broken one is refused), and the caller then
 * asks the issuer's published keys (its SD-JWT VC issuer metadata, fetched from the `iss` origin) for the
 * leaf's key, as for a credential without `x5c`.
 */
export async function checkIssuerX5c(
  x5c: unknown,
  iss: string,
  opts: { trust?: Uint8Array[]; now?: Date } = {},
): Promise<{ jwk: JWK; anchored: boolean }> {
  let chain: Uint8Array[];
  try {
    chain = readX5c(x5c, 'x5c');
  } catch (err) {
    throw new WalletError(`the credential's x5c header does not hold readable certificates: ${(err as Error).message}`);
  }
  let anchored: boolean;
  try {
    ({ anchored } = await checkChain(chain, opts));
  } catch (err) {
    if (err instanceof CertificateError)
      throw new WalletError(`the credential's issuer certificate chain (x5c) is refused: ${err.message}`);
    throw err;
  }
  const leaf = parseCertificate(chain[0], 'the x5c leaf certificate');
  const ku = leaf.getExtension(x509.KeyUsagesExtension);
  if (ku && (ku.usages & x509.KeyUsageFlags.digitalSignature) === 0)
    throw new WalletError("the credential's x5c leaf certificate may not sign (its keyUsage lacks digitalSignature)");
  if (!leafNamesIssuer(chain[0], iss)) {
    throw new WalletError(
      `the credential's x5c leaf certificate does not name its issuer ${iss} (a subjectAltName URI equal to it, or its host as dNSName; SD-JWT VC §3.5)`,
    );
  }
  const { kty, crv, x, y, n, e } = certificatePublicKey(chain[0]).export({ format: 'jwk' });
  const jwk = Object.fromEntries(Object.entries({ kty, crv, x, y, n, e }).filter(([, v]) => v !== undefined)) as JWK;
  return { jwk, anchored };
}

/**
 * Checks a received SD-JWT VC before keeping it: `typ dc+sd-jwt`, issued by the issuer we asked, signed by
 * its key, disclosures matching their digests, not expired, of the offered `vct`, and bound (`cnf.jwk`) to
 * the key the wallet proved. The issuer's key: with an `x5c` header, the leaf's key (checkIssuerX5c), which
 * must also be one the issuer publishes unless the chain ends at a CA of `issuerTrust`; without `x5c`, the
 * published key the `kid` names (or any published key when there is no `kid`).
 */
export async function verifyReceivedCredential(
  credential: string,
  expected: { credentialIssuer: string; vct?: string; holderPublicJwk: JWK; issuerTrust?: Uint8Array[]; now?: Date },
  fetchImpl: typeof fetch,
): Promise<VerifiedCredential> {
  const issuerJwt = credential.split('~')[0];
  const { header, payload } = decodeJws(issuerJwt, 'the issuer returned a credential that is not an SD-JWT');
  if (header.typ !== 'dc+sd-jwt') throw new WalletError(`credential typ is ${String(header.typ)}, expected dc+sd-jwt`);
  if (payload.iss !== expected.credentialIssuer)
    throw new WalletError(`credential iss is ${String(payload.iss)}, expected ${expected.credentialIssuer}`);

  let keys: JWK[];
  if (header.x5c !== undefined) {
    const leaf = await checkIssuerX5c(header.x5c, expected.credentialIssuer, {
      trust: expected.issuerTrust,
      now: expected.now,
    });
    if (!(await signedWith(issuerJwt, leaf.jwk, String(header.alg))))
      throw new WalletError('the credential is not signed by the key of its x5c leaf certificate');
    if (!leaf.anchored) {
      const published = await publishedKeysOrHint(expected.credentialIssuer, fetchImpl);
      const thumbprint = await calculateJwkThumbprint(leaf.jwk);
      const match = (
        await Promise.all(
          published.map(async (k) =>
            (await calculateJwkThumbprint(k).catch(() => '')) === thumbprint ? k : undefined,
          ),
        )
      ).find(Boolean);
      if (!match)
        throw new WalletError(
          "the credential's x5c leaf certificate is not for a key the issuer publishes, and no trusted issuer CA anchors its chain (--issuer-trust)",
        );
      if (header.kid !== undefined && match.kid !== header.kid)
        throw new WalletError("the credential's kid names another key than its x5c leaf certificate's");
    }
    keys = [leaf.jwk];
  } else {
    keys = (await fetchIssuerKeys(expected.credentialIssuer, fetchImpl)).filter(
      (k) => header.kid === undefined || k.kid === header.kid,
    );
  }
  if (!keys.length) throw new WalletError("none of the issuer's published keys matches the credential's kid");
  // @sd-jwt/core, not sd-jwt-vc: a credential just issued is valid, and its status list is the verifier's to check
  const sdJwt = new SDJwtInstance({ hasher: digest, verifier: verifierFor(keys, String(header.alg)) });
  try {
    await sdJwt.verify(credential);
  } catch (err) {
    throw new WalletError(`the credential does not verify: ${(err as Error).message}`);
  }

  if (typeof payload.vct !== 'string' || (expected.vct !== undefined && payload.vct !== expected.vct)) {
    throw new WalletError(`credential vct is ${String(payload.vct)}, expected ${expected.vct}`);
  }
  const cnf = payload.cnf as { jwk?: JWK } | undefined;
  if (
    !cnf?.jwk ||
    (await calculateJwkThumbprint(cnf.jwk)) !== (await calculateJwkThumbprint(expected.holderPublicJwk))
  ) {
    throw new WalletError('the credential is not bound to the key this wallet proved');
  }

  const disclosed = (await sdJwt.getClaims(credential)) as Record<string, unknown>;
  const claims = Object.fromEntries(Object.entries(disclosed).filter(([name]) => !REGISTERED_CLAIMS.has(name)));
  return {
    issuer: expected.credentialIssuer,
    vct: payload.vct,
    ...(typeof payload.exp === 'number' ? { expiresAt: payload.exp } : {}),
    claims,
  };
}

/** Asymmetric algorithms only: a MAC or `none` never proves who issued a credential. */
const ISSUER_ALGS = ['ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519', 'PS256', 'RS256'];

/** The issuer's published keys; a failure to get them says that an issuer CA could vouch instead. */
async function publishedKeysOrHint(issuer: string, fetchImpl: typeof fetch): Promise<JWK[]> {
  try {
    return await fetchIssuerKeys(issuer, fetchImpl);
  } catch (err) {
    if (!(err instanceof WalletError)) throw err;
    throw new WalletError(
      `${err.message}; the credential's x5c chain could vouch for its key instead if the wallet trusted the issuer's CA (--issuer-trust)`,
    );
  }
}

async function signedWith(jwt: string, jwk: JWK, alg: string): Promise<boolean> {
  if (!ISSUER_ALGS.includes(alg)) return false;
  try {
    await compactVerify(jwt, await importJWK(jwk, alg), { algorithms: [alg] });
    return true;
  } catch {
    return false;
  }
}

function verifierFor(keys: JWK[], alg: string) {
  return async (data: string, signature: string): Promise<boolean> => {
    if (!ISSUER_ALGS.includes(alg)) return false;
    for (const jwk of keys) {
      try {
        await compactVerify(`${data}.${signature}`, await importJWK(jwk, alg), { algorithms: [alg] });
        return true;
      } catch {
        // try the next key
      }
    }
    return false;
  };
}
