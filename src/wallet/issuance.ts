import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { jsonOrOAuthError, WalletError } from './errors.js';
import { authorizationServerFor, fetchAuthorizationServerMetadata, type CredentialIssuerMetadata } from './metadata.js';
import { PRE_AUTHORIZED_CODE_GRANT, type PreAuthorizedOffer } from './offer.js';

export interface TokenResponse {
  accessToken: string;
  tokenType: string;
  /** older issuers hand out the first c_nonce here */
  cNonce?: string;
}

/** OpenID4VCI 1.0 §6.1: the pre-authorized code (and PIN) for an access token. No client authentication. */
export async function requestToken(
  tokenEndpoint: string,
  input: { preAuthorizedCode: string; txCode?: string },
  fetchImpl: typeof fetch,
): Promise<TokenResponse> {
  const body = new URLSearchParams({
    grant_type: PRE_AUTHORIZED_CODE_GRANT,
    'pre-authorized_code': input.preAuthorizedCode,
  });
  if (input.txCode !== undefined) body.set('tx_code', input.txCode);
  const response = await fetchImpl(tokenEndpoint, { method: 'POST', body, headers: { accept: 'application/json' } });
  const json = await jsonOrOAuthError(response, 'token request');
  if (typeof json.access_token !== 'string') throw new WalletError('token response has no access_token');
  const tokenType = typeof json.token_type === 'string' ? json.token_type : 'Bearer';
  if (tokenType.toLowerCase() !== 'bearer')
    throw new WalletError(`token_type ${tokenType} is not supported by the dev wallet`);
  return {
    accessToken: json.access_token,
    tokenType,
    ...(typeof json.c_nonce === 'string' ? { cNonce: json.c_nonce } : {}),
  };
}

/** OpenID4VCI 1.0 §7: a fresh c_nonce for the proof. */
export async function requestNonce(nonceEndpoint: string, fetchImpl: typeof fetch): Promise<string> {
  const response = await fetchImpl(nonceEndpoint, { method: 'POST', headers: { accept: 'application/json' } });
  const json = await jsonOrOAuthError(response, 'nonce request');
  if (typeof json.c_nonce !== 'string') throw new WalletError('nonce response has no c_nonce');
  return json.c_nonce;
}

/**
 * OpenID4VCI 1.0 Appendix F.1: a JWT proof of possession of the holder key, the public key in the header,
 * `aud` = the credential issuer, the issuer's `nonce`. No `iss`: the pre-authorized flow is anonymous.
 */
export async function createProof(input: {
  holderPrivateKey: CryptoKey;
  holderPublicJwk: JWK;
  audience: string;
  nonce?: string;
}): Promise<string> {
  const jwt = new SignJWT(input.nonce === undefined ? {} : { nonce: input.nonce })
    .setProtectedHeader({ alg: 'ES256', typ: 'openid4vci-proof+jwt', jwk: input.holderPublicJwk })
    .setAudience(input.audience)
    .setIssuedAt();
  return jwt.sign(input.holderPrivateKey);
}

/**
 * What a credential request needs, for either format: the offer's pre-authorized code (with the PIN)
 * redeemed at the authorisation server the issuer names, a c_nonce (from the nonce endpoint, else the
 * token response's), and a fresh P-256 key proven for it (the SD-JWT VC's holder key, the mdoc's device
 * key: HAIP 1.0 has both sign ES256).
 */
export async function redeemOffer(
  offer: PreAuthorizedOffer,
  issuerMetadata: CredentialIssuerMetadata,
  pin: string | undefined,
  fetchImpl: typeof fetch,
): Promise<{ token: TokenResponse; privateKey: CryptoKey; publicJwk: JWK; proof: string }> {
  const authorizationServer = authorizationServerFor(issuerMetadata, offer.authorizationServer);
  const asMetadata = await fetchAuthorizationServerMetadata(authorizationServer, fetchImpl);
  const token = await requestToken(
    asMetadata.token_endpoint,
    { preAuthorizedCode: offer.preAuthorizedCode, txCode: pin },
    fetchImpl,
  );
  const nonce = issuerMetadata.nonce_endpoint
    ? await requestNonce(issuerMetadata.nonce_endpoint, fetchImpl)
    : token.cNonce;
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  const publicJwk = await exportJWK(publicKey);
  const proof = await createProof({
    holderPrivateKey: privateKey,
    holderPublicJwk: publicJwk,
    audience: offer.credentialIssuer,
    nonce,
  });
  return { token, privateKey, publicJwk, proof };
}

/**
 * OpenID4VCI 1.0 §8: the credential for one configuration, bound to the proven key, and the
 * `notification_id` the issuer gave with it (§8.3), if any.
 */
export async function requestCredential(
  credentialEndpoint: string,
  input: { accessToken: string; tokenType: string; credentialConfigurationId: string; proof: string },
  fetchImpl: typeof fetch,
): Promise<{ credential: string; notificationId?: string }> {
  const response = await fetchImpl(credentialEndpoint, {
    method: 'POST',
    headers: {
      authorization: `${input.tokenType} ${input.accessToken}`,
      'content-type': 'application/json',
      accept: 'application/json',
    },
    body: JSON.stringify({
      credential_configuration_id: input.credentialConfigurationId,
      proofs: { jwt: [input.proof] },
    }),
  });
  const json = await jsonOrOAuthError(response, 'credential request');
  const credentials = json.credentials;
  if (!Array.isArray(credentials) || credentials.length === 0) {
    throw new WalletError(
      typeof json.transaction_id === 'string'
        ? 'the issuer deferred the credential, which the dev wallet does not support'
        : 'credential response has no credentials',
    );
  }
  const first = credentials[0] as { credential?: unknown };
  if (typeof first?.credential !== 'string')
    throw new WalletError('credential response: credentials[0].credential must be a string');
  return {
    credential: first.credential,
    ...(typeof json.notification_id === 'string' ? { notificationId: json.notification_id } : {}),
  };
}

/**
 * OpenID4VCI 1.0 §11: tells the issuer what became of the credential (`credential_accepted` once it is
 * stored), with the access token it was fetched with. The issuer answers 204.
 */
export async function sendNotification(
  notificationEndpoint: string,
  input: {
    accessToken: string;
    tokenType: string;
    notificationId: string;
    event: 'credential_accepted' | 'credential_failure' | 'credential_deleted';
  },
  fetchImpl: typeof fetch,
): Promise<void> {
  const response = await fetchImpl(notificationEndpoint, {
    method: 'POST',
    headers: {
      authorization: `${input.tokenType} ${input.accessToken}`,
      'content-type': 'application/json',
      accept: 'application/json',
    },
    body: JSON.stringify({ notification_id: input.notificationId, event: input.event }),
  });
  if (response.status === 204) return;
  await jsonOrOAuthError(response, 'notification');
  throw new WalletError(`notification: the issuer answered HTTP ${response.status}`);
}
