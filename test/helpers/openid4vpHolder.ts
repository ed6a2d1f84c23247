import { createHash, createPrivateKey, sign, X509Certificate } from 'node:crypto';
import {
  createOpenid4vpAuthorizationResponse,
  parseOpenid4vpAuthorizationRequest,
  resolveOpenid4vpAuthorizationRequest,
  submitOpenid4vpAuthorizationResponse,
} from '@openid4vc/openid4vp';
import { HashAlgorithm, setGlobalConfig, type CallbackContext } from '@openid4vc/oauth2';
import { digest } from '@sd-jwt/crypto-nodejs';
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc';
import { compactVerify, exportJWK, importX509, type JWK } from 'jose';
import { encryptAnswer } from './encryptAnswer.js';

/**
 * An independent holder on @openid4vc/openid4vp (not the dev wallet): the library resolves the signed
 * request (its own client identifier checks run), builds the response and encrypts it; the chain and
 * signature checks are its callbacks, here with node:crypto and jose. The library does not match DCQL
 * queries: choosing what to disclose is `firstClaimSet`, the rule of OpenID4VP 1.0 §6.4.1.
 */

// the test services listen on loopback http
setGlobalConfig({ allowInsecureUrls: true });

/** The wallet's callbacks for @openid4vc/openid4vp: trust is the given CA, verification by node:crypto and jose. */
export function walletCallbacks(
  trust: X509Certificate,
): Pick<
  CallbackContext,
  'verifyJwt' | 'getX509CertificateMetadata' | 'hash' | 'fetch' | 'encryptJwe' | 'decryptJwe' | 'signJwt'
> {
  return {
    decryptJwe: () => {
      throw new Error('the verifier sends no encrypted request objects');
    },
    signJwt: () => {
      throw new Error('the wallet signs nothing here (responses are encrypted, not signed)');
    },
    fetch,
    hash: (data, alg) =>
      new Uint8Array(
        createHash(alg === HashAlgorithm.Sha384 ? 'sha384' : alg === HashAlgorithm.Sha512 ? 'sha512' : 'sha256')
          .update(data)
          .digest(),
      ),
    getX509CertificateMetadata: (certificate) => {
      const cert = new X509Certificate(Buffer.from(certificate, 'base64'));
      const names = (cert.subjectAltName ?? '').split(', ');
      return {
        sanDnsNames: names.filter((n) => n.startsWith('DNS:')).map((n) => n.slice(4)),
        sanUriNames: names.filter((n) => n.startsWith('URI:')).map((n) => n.slice(4)),
      };
    },
    verifyJwt: async (signer, jwt) => {
      if (signer.method !== 'x5c') return { verified: false };
      const leaf = new X509Certificate(Buffer.from(signer.x5c[0], 'base64'));
      const chained = leaf.checkIssued(trust) && leaf.verify(trust.publicKey) && new Date(leaf.validTo) > new Date();
      const key = await importX509(leaf.toString(), 'ES256');
      const verified =
        chained &&
        (await compactVerify(jwt.compact, key).then(
          () => true,
          () => false,
        ));
      const signerJwk = (await exportJWK(key)) as never;
      return verified ? { verified: true, signerJwk } : { verified: false, signerJwk };
    },
    encryptJwe: async (encryptor, data) => {
      if (encryptor.method !== 'jwk') throw new Error('only jwk encryption');
      const jwe = await encryptAnswer(encryptor.publicJwk as JWK, data, { alg: encryptor.alg, enc: encryptor.enc });
      return { jwe, encryptionJwk: encryptor.publicJwk };
    },
  };
}

export interface DcqlCredentialQueryLike {
  id: string;
  format: string;
  claims?: Array<{ id?: string; path: Array<string | number | null> }>;
  claim_sets?: string[][];
}

/**
 * OpenID4VP 1.0 §6.4.1, as a wallet applies it: the claim names of the first claim set (else of all
 * claims) whose every claim the credential has, `undefined` when none. A claim's name is its path's last
 * element (`[name]` for SD-JWT VC, `[namespace, name]` for mdoc).
 */
export function firstClaimSet(query: DcqlCredentialQueryLike, has: readonly string[]): string[] | undefined {
  const byId = new Map((query.claims ?? []).map((claim, i) => [claim.id ?? String(i), String(claim.path.at(-1))]));
  const options = query.claim_sets ?? [[...byId.keys()]];
  return options
    .map((option) => option.map((id) => byId.get(id)!))
    .find((names) => names.every((name) => has.includes(name)));
}

/** An SD-JWT VC presentation by @sd-jwt/sd-jwt-vc disclosing `disclose`, with its key binding JWT. */
export async function presentSdJwtDisclosing(
  credential: string,
  holderKey: JWK,
  disclose: string[],
  kb: { aud: string; nonce: string },
): Promise<string> {
  const key = createPrivateKey({ key: holderKey as never, format: 'jwk' });
  const sdJwt = new SDJwtVcInstance({
    hasher: digest,
    kbSignAlg: 'ES256',
    kbSigner: (data: string) =>
      sign('sha256', Buffer.from(data), { key, dsaEncoding: 'ieee-p1363' }).toString('base64url'),
  });
  const frame = Object.fromEntries(disclose.map((name) => [name, true]));
  return sdJwt.present(credential, frame, {
    kb: { payload: { aud: kb.aud, nonce: kb.nonce, iat: Math.floor(Date.now() / 1000) } },
  });
}

/** The request as the holder read it: what a presentation is bound to. */
export type ResolvedRequest = Record<string, any>;

/** The wallet metadata the independent holder resolves requests with: both formats, ES256, ECDH-ES. */
export const HOLDER_WALLET_METADATA = {
  vp_formats_supported: {
    'dc+sd-jwt': { 'sd-jwt_alg_values': ['ES256'], 'kb-jwt_alg_values': ['ES256'] },
    mso_mdoc: { issuerauth_alg_values: [-7], deviceauth_alg_values: [-7] },
  },
  authorization_encryption_alg_values_supported: ['ECDH-ES'],
  authorization_encryption_enc_values_supported: ['A256GCM'],
  client_id_prefixes_supported: ['x509_hash', 'x509_san_dns'],
};

/**
 * The library's `jarm` option: when the request's response mode is `encryptedMode` (direct_post.jwt, or
 * dc_api.jwt over the Digital Credentials API), the answer is encrypted to the key in the request's
 * client_metadata, bound to its nonce.
 */
export function encryptedAnswerFor(request: ResolvedRequest, encryptedMode: 'direct_post.jwt' | 'dc_api.jwt') {
  return request.response_mode === encryptedMode
    ? {
        encryption: { nonce: request.nonce as string },
        serverMetadata: {
          authorization_signing_alg_values_supported: [],
          authorization_encryption_alg_values_supported: ['ECDH-ES'],
          authorization_encryption_enc_values_supported: ['A128GCM', 'A256GCM'],
        },
      }
    : undefined;
}

/**
 * The library resolves the request behind `link` (by POST when the link says so), `answer` builds the
 * vp_token from it, and the library sends it back, encrypted when the request asks for direct_post.jwt.
 */
export async function independentHolderAnswers(
  link: string,
  trust: X509Certificate,
  answer: (request: ResolvedRequest) => Promise<Record<string, string[]>>,
): Promise<{ status: number }> {
  const callbacks = walletCallbacks(trust);
  const parsed = parseOpenid4vpAuthorizationRequest({ authorizationRequest: link });
  const resolved = await resolveOpenid4vpAuthorizationRequest({
    authorizationRequestPayload: parsed.params as never,
    wallet: { metadata: HOLDER_WALLET_METADATA as never },
    callbacks,
  });
  const request = resolved.authorizationRequestPayload as ResolvedRequest;
  const response = await createOpenid4vpAuthorizationResponse({
    authorizationRequestPayload: resolved.authorizationRequestPayload,
    authorizationResponsePayload: { vp_token: await answer(request) },
    jarm: encryptedAnswerFor(request, 'direct_post.jwt'),
    callbacks,
  });
  const submitted = await submitOpenid4vpAuthorizationResponse({
    authorizationRequestPayload: request as never,
    authorizationResponsePayload: response.authorizationResponsePayload,
    ...(response.jarm ? { jarm: { responseJwt: response.jarm.responseJwt } } : {}),
    callbacks,
  });
  return { status: submitted.response.status };
}
