import { createHash, randomBytes } from 'node:crypto';
import { clientAuthenticationAnonymous, Oauth2Client, type JwtSigner } from '@openid4vc/oauth2';
import { Openid4vciClient } from '@openid4vc/openid4vci';
import { calculateJwkThumbprint, CompactSign, type JWK } from 'jose';

/** A key the independent wallet signs with: its private half, and the public JWK it names. */
export interface WalletKey {
  privateKey: CryptoKey;
  publicJwk: JWK;
}

/**
 * The independent wallet (@openid4vc/openid4vci), signing with jose: each JWT with the key of `keys` whose
 * public JWK the library names (a proof's holder key, a DPoP key), the first when it names none.
 */
export function independentWallet(keys: WalletKey[], fetchImpl: typeof fetch = fetch): Openid4vciClient {
  return new Openid4vciClient({ callbacks: walletCallbacks(keys, fetchImpl) });
}

/** The same wallet's OAuth 2.0 client (@openid4vc/oauth2), for what OpenID4VCI leaves to OAuth: the refresh grant. */
export function independentOauth2Client(keys: WalletKey[], fetchImpl: typeof fetch = fetch): Oauth2Client {
  return new Oauth2Client({ callbacks: walletCallbacks(keys, fetchImpl) });
}

function walletCallbacks(keys: WalletKey[], fetchImpl: typeof fetch) {
  const signJwt = async (signer: JwtSigner, { header, payload }: { header: object; payload: object }) => {
    let key = keys[0];
    if (signer.method === 'jwk') {
      const wanted = await calculateJwkThumbprint(signer.publicJwk as JWK);
      for (const candidate of keys) if ((await calculateJwkThumbprint(candidate.publicJwk)) === wanted) key = candidate;
    }
    const jwt = await new CompactSign(new TextEncoder().encode(JSON.stringify(payload)))
      .setProtectedHeader(header as never)
      .sign(key.privateKey);
    return { jwt, signerJwk: key.publicJwk as never };
  };
  return {
    fetch: fetchImpl,
    hash: (data: Uint8Array, alg: string) =>
      new Uint8Array(createHash(alg.replace('-', '').toLowerCase()).update(data).digest()),
    generateRandom: (length: number) => new Uint8Array(randomBytes(length)),
    clientAuthentication: clientAuthenticationAnonymous(),
    signJwt: signJwt as never,
  };
}
